/* svctcp_create does not listen on a socket that is already bound, so we bind and listen
 * ourselves before handing the socket over. */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "loopback_svc.h"

int serve_loopback(int port, rpcprog_t prog, rpcvers_t vers,
                   void (*dispatch)(struct svc_req *, SVCXPRT *))
{
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
    if (xprt == NULL || !svc_register(xprt, prog, vers, dispatch, 0)) {
        fprintf(stderr, "svctcp_create/svc_register failed\n");
        return 1;
    }
    printf("listening 127.0.0.1:%d\n", ntohs(sin.sin_port));
    fflush(stdout);
    svc_run();
    return 1;
}
