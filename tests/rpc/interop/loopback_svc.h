/* Serve one ONC RPC program over TCP on 127.0.0.1 without rpcbind (shared by the interop test
 * server and the echo bench server). */
#ifndef LOOPBACK_SVC_H
#define LOOPBACK_SVC_H

#include <rpc/rpc.h>

/* Bind and listen on 127.0.0.1:port (0 = an ephemeral port), register prog/vers with protocol 0
 * (so the portmapper is never contacted), print "listening 127.0.0.1:PORT" once ready and run
 * the service loop. Returns 1 only on failure (svc_run does not return). */
int serve_loopback(int port, rpcprog_t prog, rpcvers_t vers,
                   void (*dispatch)(struct svc_req *, SVCXPRT *));

#endif
