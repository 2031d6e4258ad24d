/* The C echo client: times N ECHO calls of SIZE bytes each, after a few warm-up calls.
 *     echo_client HOST PORT SIZE N      prints "N SECONDS" */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <rpc/rpc.h>
#include "echo.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int echo_once(CLIENT *cl, payload *arg)
{
    struct timeval tv = {60, 0};
    payload res;
    memset(&res, 0, sizeof res);
    if (clnt_call(cl, ECHO, (xdrproc_t)xdr_payload, (caddr_t)arg, (xdrproc_t)xdr_payload,
                  (caddr_t)&res, tv) != RPC_SUCCESS) {
        clnt_perror(cl, "ECHO");
        return 0;
    }
    if (res.payload_len != arg->payload_len) {
        fprintf(stderr, "ECHO returned %u of %u bytes\n", res.payload_len, arg->payload_len);
        return 0;
    }
    clnt_freeres(cl, (xdrproc_t)xdr_payload, (caddr_t)&res);
    return 1;
}

int main(int argc, char **argv)
{
    struct sockaddr_in sin;
    int sock = RPC_ANYSOCK;
    CLIENT *cl;
    payload arg;
    long n, i;
    double t0;

    if (argc != 5) {
        fprintf(stderr, "usage: %s HOST PORT SIZE N\n", argv[0]);
        return 2;
    }
    n = atol(argv[4]);
    arg.payload_len = (u_int)atol(argv[3]);
    arg.payload_val = calloc(arg.payload_len ? arg.payload_len : 1, 1);
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons(atoi(argv[2]));
    inet_pton(AF_INET, argv[1], &sin.sin_addr);
    cl = clnttcp_create(&sin, ECHO_PROG, ECHO_V1, &sock, 0, 0);
    if (!cl) {
        clnt_pcreateerror("clnttcp_create");
        return 1;
    }
    for (i = 0; i < 3; i++)
        if (!echo_once(cl, &arg))
            return 1;
    t0 = now();
    for (i = 0; i < n; i++)
        if (!echo_once(cl, &arg))
            return 1;
    printf("%ld %.9f\n", n, now() - t0);
    return 0;
}
