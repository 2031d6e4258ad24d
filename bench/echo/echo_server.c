/* The C echo server: procedures of echo.x, listening on 127.0.0.1 (port from argv, 0 = any)
 * without rpcbind (serve_loopback); prints "listening HOST:PORT" once ready. */
#include <stdlib.h>
#include <rpc/rpc.h>
#include "echo.h"
#include "loopback_svc.h"   /* from tests/rpc/interop */

void echo_prog_1(struct svc_req *rq, SVCXPRT *transp);

/* The generated dispatcher sends the reply before it frees the arguments, so the reply may
 * point into them. */
payload *echo_1_svc(payload *arg, struct svc_req *rq)
{
    static payload result;
    (void)rq;
    result = *arg;
    return &result;
}

int *sink_1_svc(payload *arg, struct svc_req *rq)
{
    static int result;
    (void)rq;
    result = (int)arg->payload_len;
    return &result;
}

int main(int argc, char **argv)
{
    return serve_loopback(argc > 1 ? atoi(argv[1]) : 0, ECHO_PROG, ECHO_V1, echo_prog_1);
}
