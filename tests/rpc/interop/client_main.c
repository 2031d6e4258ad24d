/* The C interop client: connects straight to HOST:PORT (no rpcbind) and runs every procedure,
 * printing one line per result.  usage: client HOST PORT none|sys [PROG_VERS_OVERRIDE] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rpc/rpc.h>
#include "interop.h"

static struct timeval zero = {0, 0};
static struct timeval wait25 = {25, 0};

int main(int argc, char **argv)
{
    struct sockaddr_in sin;
    int sock = RPC_ANYSOCK;
    CLIENT *cl;
    int *sum, *count;
    summary *s;
    intlist in, *out;
    record r;
    point pts[3] = {{1, 2}, {3, 4}, {5, 6}};
    int vals[5] = {1, -2, 3, 40000, 0};
    char **who;
    int i, batched = 5;
    enum clnt_stat st;

    if (argc < 4) {
        fprintf(stderr, "usage: %s HOST PORT none|sys\n", argv[0]);
        return 2;
    }
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons(atoi(argv[2]));
    inet_pton(AF_INET, argv[1], &sin.sin_addr);
    cl = clnttcp_create(&sin, INTEROP_PROG, INTEROP_V1, &sock, 0, 0);
    if (cl == NULL) {
        clnt_pcreateerror("clnttcp_create");
        return 1;
    }
    if (strcmp(argv[3], "sys") == 0) {
        gid_t gids[2] = {7, 8};
        cl->cl_auth = authunix_create("c-client", 4321, 765, 2, gids);
    }

    st = clnt_call(cl, NULLPROC, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL, wait25);
    printf("NULL %s\n", st == RPC_SUCCESS ? "ok" : clnt_sperrno(st));

    sum = add_1(40, 2, cl);
    if (sum == NULL) { clnt_perror(cl, "ADD"); return 1; }
    printf("ADD %d\n", *sum);

    for (i = 0; i < 3; i++) {
        memset(&r, 0, sizeof r);
        r.name = "world";
        r.pts.pts_len = 3;
        r.pts.pts_val = pts;
        r.s.kind = i == 0 ? CIRCLE : i == 1 ? RECT : DOT;
        if (i == 0) r.s.shape_u.radius = 5;
        if (i == 1) { r.s.shape_u.corner.x = 6; r.s.shape_u.corner.y = 7; }
        r.big = -1234567890123LL;
        r.d = 1.25;
        r.flag = i == 1;
        memcpy(r.tag, "abcd", 4);
        s = summarize_1(r, cl);
        if (s == NULL) { clnt_perror(cl, "SUMMARIZE"); return 1; }
        printf("SUMMARIZE %d %d %d %d %s %lld %.3f %d %.4s\n", s->npoints, s->sum_x, s->sum_y,
               s->area, s->name, (long long)s->big2, s->d2, s->flag, s->tag);
    }

    in.intlist_len = 5;
    in.intlist_val = vals;
    out = squares_1(in, cl);
    if (out == NULL) { clnt_perror(cl, "SQUARES"); return 1; }
    printf("SQUARES");
    for (i = 0; i < (int)out->intlist_len; i++)
        printf(" %d", out->intlist_val[i]);
    printf("\n");

    for (i = 0; i < batched; i++) {
        char *text = "batched line";
        /* batched: no result decoder and a zero timeout, so libtirpc does not wait */
        clnt_call(cl, LOG, (xdrproc_t)xdr_wrapstring, (caddr_t)&text, NULL, NULL, zero);
    }
    count = count_1(cl);
    if (count == NULL) { clnt_perror(cl, "COUNT"); return 1; }
    printf("COUNT %d\n", *count);

    who = whoami_1(cl);
    if (who == NULL) { clnt_perror(cl, "WHOAMI"); return 1; }
    printf("WHOAMI %s\n", *who);

    clnt_destroy(cl);
    return 0;
}
