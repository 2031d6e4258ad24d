/* Procedures of the C interop server (rpcgen -N -m dispatch calls these). */
#include <stdio.h>
#include <string.h>
#include <rpc/rpc.h>
#include "interop.h"

static int log_count;

int *add_1_svc(int a, int b, struct svc_req *rq)
{
    static int result;
    (void)rq;
    result = a + b;
    return &result;
}

summary *summarize_1_svc(record r, struct svc_req *rq)
{
    static summary result;
    static char name[MAXNAME + 16];
    u_int i;
    (void)rq;
    memset(&result, 0, sizeof result);
    result.npoints = r.pts.pts_len;
    for (i = 0; i < r.pts.pts_len; i++) {
        result.sum_x += r.pts.pts_val[i].x;
        result.sum_y += r.pts.pts_val[i].y;
    }
    switch (r.s.kind) {
    case CIRCLE: result.area = 3 * r.s.shape_u.radius * r.s.shape_u.radius; break;
    case RECT: result.area = r.s.shape_u.corner.x * r.s.shape_u.corner.y; break;
    default: result.area = -1; break;
    }
    snprintf(name, sizeof name, "hello, %s", r.name);
    name[MAXNAME] = '\0';
    result.name = name;
    result.big2 = r.big * 2;
    result.d2 = r.d * 2;
    result.flag = !r.flag;
    for (i = 0; i < 4; i++)
        result.tag[i] = r.tag[3 - i];
    return &result;
}

intlist *squares_1_svc(intlist l, struct svc_req *rq)
{
    static intlist result;
    static int vals[100];
    u_int i;
    (void)rq;
    for (i = 0; i < l.intlist_len && i < 100; i++)
        vals[i] = l.intlist_val[i] * l.intlist_val[i];
    result.intlist_len = i;
    result.intlist_val = vals;
    return &result;
}

void *log_1_svc(char *text, struct svc_req *rq)
{
    (void)text; (void)rq;
    log_count++;
    return NULL;                       /* no reply: batched */
}

int *count_1_svc(struct svc_req *rq)
{
    static int result;
    (void)rq;
    result = log_count;
    return &result;
}

char **whoami_1_svc(struct svc_req *rq)
{
    static char buf[400];
    static char *result;
    if (rq->rq_cred.oa_flavor == AUTH_SYS) {
        struct authunix_parms *p = (struct authunix_parms *)rq->rq_clntcred;
        snprintf(buf, sizeof buf, "flavor=1 uid=%u gid=%u machine=%s ngids=%u",
                 p->aup_uid, p->aup_gid, p->aup_machname, p->aup_len);
    } else {
        snprintf(buf, sizeof buf, "flavor=%d", (int)rq->rq_cred.oa_flavor);
    }
    result = buf;
    return &result;
}

void *fail_1_svc(int how, struct svc_req *rq)
{
    static char dummy;
    switch (how) {
    case 1: svcerr_systemerr(rq->rq_xprt); return NULL;
    case 2: svcerr_weakauth(rq->rq_xprt); return NULL;
    case 3: svcerr_auth(rq->rq_xprt, AUTH_TIMEEXPIRE); return NULL;
    default: return &dummy;            /* plain void reply */
    }
}
