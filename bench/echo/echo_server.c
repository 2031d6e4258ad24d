/* The C echo server: procedures of echo.x, listening on 127.0.0.1 (port from argv, 0 = any)
 * without rpcbind; prints "listening HOST:PORT" once ready. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <rpc/rpc.h>
#include "echo.h"

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
    int one = 1;
    struct sockaddr_in sin;
    socklen_t len = sizeof sin;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    SVCXPRT *xprt;

    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons(argc > 1 ? atoi(argv[1]) : 0);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sin, sizeof sin) < 0 || listen(fd, SOMAXCONN) < 0) {
        perror("bind/listen");
        return 1;
    }
    getsockname(fd, (struct sockaddr *)&sin, &len);
    xprt = svctcp_create(fd, 0, 0);
    if (xprt == NULL || !svc_register(xprt, ECHO_PROG, ECHO_V1, echo_prog_1, 0)) {
        fprintf(stderr, "svctcp_create/svc_register failed\n");
        return 1;
    }
    printf("listening 127.0.0.1:%d\n", ntohs(sin.sin_port));
    fflush(stdout);
    svc_run();
    return 1;
}
