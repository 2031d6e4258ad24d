/* The C interop server on a fixed (or ephemeral) loopback port, without rpcbind:
 * server ARGV[1] = port (0 or absent = any). */
#include <stdlib.h>
#include "interop.h"
#include "loopback_svc.h"

void interop_prog_1(struct svc_req *rq, SVCXPRT *transp);

int main(int argc, char **argv)
{
    return serve_loopback(argc > 1 ? atoi(argv[1]) : 0, INTEROP_PROG, INTEROP_V1, interop_prog_1);
}
