/* The C interop server on a fixed (or ephemeral) loopback port, without rpcbind:
 * bind and listen ourselves (svctcp_create does not listen on a bound socket), then
 * svc_register with protocol 0 so the portmapper is never contacted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <rpc/rpc.h>
#include "interop.h"

void interop_prog_1(struct svc_req *rq, SVCXPRT *transp);

int main(int argc, char **argv)
{
    int port = argc > 1 ? atoi(argv[1]) : 0;
    int one = 1;
    struct sockaddr_in sin;
    socklen_t len = sizeof sin;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    SVCXPRT *xprt;

    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sin, sizeof sin) < 0 || listen(fd, SOMAXCONN) < 0) {
        perror("bind/listen");
        return 1;
    }
    getsockname(fd, (struct sockaddr *)&sin, &len);
    xprt = svctcp_create(fd, 0, 0);
    if (xprt == NULL || !svc_register(xprt, INTEROP_PROG, INTEROP_V1, interop_prog_1, 0)) {
        fprintf(stderr, "svctcp_create/svc_register failed\n");
        return 1;
    }
    printf("listening 127.0.0.1:%d\n", ntohs(sin.sin_port));
    fflush(stdout);
    svc_run();
    return 1;
}
