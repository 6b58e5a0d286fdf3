/* net: an event-driven web server serving static files (nginx-style).
 *
 * One worker process (nginx's model: an epoll loop, keep-alive connections,
 * sendfile on, open_file_cache so no open/close per request). Per request:
 *   epoll_wait on the epoll fd (one ready connection: 12 bytes out, struct
 *     epoll_event packed on x86); it sleeps with probability wait-pct/100;
 *   recvfrom of the request into nginx's 1 KiB client_header_buffer_size
 *     (the request: 200-500 bytes, uniform; estimate for a GET with a
 *     browser's headers);
 *   a 304 Not Modified with probability not-modified-pct/100: the header
 *     alone with sendto (estimate: ~180 bytes);
 *   otherwise the response header with writev (one iovec, 240-280 bytes,
 *     estimate) and the body with sendfile64 from the cached file (its loff_t
 *     offset pointer copied in and out: 8 + 8 bytes).
 * The file is drawn from SPECweb99's static file set: four classes of nine
 * files, class 0 from 0.1 to 0.9 KB, class 1 1-9 KB, class 2 10-90 KB,
 * class 3 100-900 KB, requested 35 %, 50 %, 14 % and 1 % of the time (the
 * SPECweb99 design document); within a class, file k (1-9) with weight 1/k,
 * a Zipf law as SPECweb99 uses (its exact per-file table is not reproduced).
 * A whole file goes in one sendfile64 (a simplification: a real server may
 * need several when the socket buffer fills). Random: connection, file,
 * sizes, the 304s and the sleeps. */
#include "replay/gen.h"

#define NET_PID 1000
#define FD_EPOLL 7
#define FD_CONN0 8      /* connections 8 .. 8 + conns - 1 */

#define HEADER_BUFFER 1024 /* nginx client_header_buffer_size default */
#define EPOLL_EVENT 12
#define IOVEC 8
#define LOFF 8

/* Per mille of requests per class (35 %, 50 %, 14 %, 1 %). */
static const unsigned class_permille[4] = {350, 500, 140, 10};

static unsigned net_pick_class(GenContext *g)
{
    uint64_t r = gen_below(g, 1000);
    unsigned c = 0;
    while (r >= class_permille[c])
        r -= class_permille[c++];
    return c;
}

/* File k in 1..9 with probability (1/k) / H9, in integer arithmetic:
 * weights 2520/k (2520 = lcm(1..9)) sum to 7129. */
static unsigned net_pick_file(GenContext *g)
{
    uint64_t r = gen_below(g, 7129);
    unsigned k = 1;
    while (r >= 2520 / k)
        r -= 2520 / k++;
    return k;
}

static void net_sys(GenContext *g, const char *name, int fd, int64_t ret, uint64_t req,
                    uint64_t in, uint64_t out, bool blocked)
{
    TraceEvent ev = gen_sys_event(NET_PID, name, ret);
    ev.u.sys.fd = fd;
    ev.u.sys.req = req;
    ev.u.sys.in = in;
    ev.u.sys.out = out;
    ev.u.sys.blocked = blocked;
    gen_loop_sys(g, &ev);
}

static void net_run(GenContext *g)
{
    const uint64_t conns = (uint64_t)gen_param(g, "conns");
    const double wait_p = gen_param(g, "wait-pct") / 100.0;
    const double nm_p = gen_param(g, "not-modified-pct") / 100.0;
    while (!gen_done(g)) {
        bool sleeps = gen_chance(g, wait_p);
        net_sys(g, "epoll_wait", FD_EPOLL, 1, 0, 0, EPOLL_EVENT, sleeps);
        int conn = FD_CONN0 + (int)gen_below(g, conns);
        int64_t request = 200 + (int64_t)gen_below(g, 301);
        net_sys(g, "recvfrom", conn, request, HEADER_BUFFER, 0, (uint64_t)request, false);
        if (gen_chance(g, nm_p)) {
            int64_t hdr = 170 + (int64_t)gen_below(g, 21);
            net_sys(g, "sendto", conn, hdr, (uint64_t)hdr, (uint64_t)hdr, 0, false);
            continue;
        }
        unsigned cls = net_pick_class(g), k = net_pick_file(g);
        uint64_t size = 1024;
        for (unsigned i = 0; i < cls; i++)
            size *= 10;
        size = size * k / 10; /* class 0 file 1: 102 bytes ... class 3 file 9: 921 600 */
        int64_t hdr = 240 + (int64_t)gen_below(g, 41);
        net_sys(g, "writev", conn, hdr, 0, (uint64_t)hdr + IOVEC, 0, false);
        net_sys(g, "sendfile64", conn, (int64_t)size, size, LOFF, LOFF, false);
    }

}

static const GenParam net_params[] = {
    {"conns", 16, 1, 60000, true, "keep-alive connections the requests come on (estimate)"},
    {"wait-pct", 100, 0, 100, false,
     "percentage of epoll_wait calls that sleep (estimate: 100, a server below saturation;\n"
     "        lower it for a busy one whose next request is already queued)"},
    {"not-modified-pct", 10, 0, 100, false,
     "percentage of requests answered 304 Not Modified with one sendto (estimate)"},
    {NULL, 0, 0, 0, false, NULL},
};

const Generator gen_net = {
    .name = "net",
    .summary = "an epoll web server sending SPECweb99-sized static files",
    .imitates = "an nginx-style worker: epoll_wait, recvfrom of the request, then writev of\n"
                "the header and sendfile64 of the file, or sendto of a 304 header. File sizes\n"
                "from SPECweb99's static file set (classes of 0.1-0.9, 1-9, 10-90, 100-900 KB\n"
                "requested 35/50/14/1 %, Zipf within a class); request and header sizes and\n"
                "the 304 share are estimates.",
    .default_user_insns = 5000,
    .user_insns_source = "estimate: nginx serves ~25 000 small static requests per second per\n"
                         "modern core with ~4 syscalls each, ~20 000 instructions per request\n"
                         "of which a part is kernel time",
    .default_pages = 64,
    .default_pattern = TRACE_PAT_HOT,
    .pages_source = "estimate: connection structures, request pool, header buffers and the\n"
                    "server's code: 256 KiB with a hot core",
    .params = net_params,
    .run = net_run,
};
