/* Generated workloads at a realised syscall rate: see gen_rate.h. */
#include "replay/gen_rate.h"

#include <glib/gstdio.h>
#include <math.h>
#include <unistd.h>

#include "kernel_model/layout.h"
#include "replay/replay.h"

#define BASELINE_LAYOUT "3g1g"

bool gen_rate_measure(const char *trace, const Preset *p, bool sysenter, PagingMode paging,
                      double *rate, double *kernel_s, double *user_s_per_insn, uint64_t *syscalls,
                      uint64_t *user_insns, GError **err)
{
    /* 4 GiB: within both modes' physical reach (legacy paging: 4 GiB). */
    ReplayConfig cfg = { .preset = p,
                         .layout = layout_with_paging(layout_find(BASELINE_LAYOUT), paging),
                         .ram = 4ULL << 30, .sysenter = sysenter };
    ReplayResult *r = replay_run(&cfg, trace, err);
    if (!r)
        return false;
    const ReplayTotals *t = replay_totals(r);
    *user_insns = t->user_insns;
    double secs = replay_seconds(r), hz = p->clock_mhz * 1e6;
    bool ok = t->syscalls > 0 && secs > 0;
    if (ok) {
        *rate = (double)t->syscalls / secs;
        *kernel_s = (secs - (double)t->user_cycles / hz) / (double)t->syscalls;
        *user_s_per_insn = t->user_insns ? (double)t->user_cycles / hz / (double)t->user_insns
                                         : 1.0 / hz;
        *syscalls = t->syscalls;
    } else {
        g_set_error(err, GEN_ERROR, GEN_ERROR_OPTION,
                    "%s: no system call replayed, so it has no rate", trace);
    }
    replay_result_free(r);
    return ok;
}

/* Write gen's trace with u user instructions per syscall to a temporary
 * file and measure it: the rate, k and c per syscall of the loop (c per
 * unit of u: not every syscall of a generator follows user work, and setup
 * calls follow none, so the user instructions per syscall are a fraction
 * of u). */
static bool try_insns(const Generator *gen, const GenOptions *o, const GenRateTarget *t,
                      uint64_t u, double *rate, double *k, double *c, GError **err)
{
    GenOptions g = *o;
    g.rate = 0;
    g.have_user_insns = true;
    g.user_insns = u;
    char *path = NULL;
    int fd = g_file_open_tmp("vmsplit-rate-XXXXXX", &path, err);
    if (fd < 0)
        return false;
    close(fd);
    uint64_t n = 0, insns = 0;
    double per_insn = 0;
    bool ok = gen_write(gen, &g, path, err) &&
              gen_rate_measure(path, t->preset, t->sysenter, t->paging, rate, k, &per_insn, &n,
                               &insns, err);
    /* Seconds per syscall that one more unit of u adds. */
    if (ok)
        *c = per_insn * (double)insns / (double)n / (double)u;
    g_remove(path);
    g_free(path);
    return ok;
}

bool gen_rate_solve(const Generator *gen, const GenOptions *o, const GenRateTarget *t,
                    GenRateResult *res, GError **err)
{
    g_assert(t->rate > 0 && t->preset);
    double hz = t->preset->clock_mhz * 1e6;
    /* First guess: all of 1/R is user time at one instruction per cycle. */
    double u = fmax(1.0, round(hz / t->rate));
    *res = (GenRateResult){ 0 };
    for (unsigned round_ = 1; round_ <= GEN_RATE_MAX_ROUNDS; round_++) {
        double rate, k, c;
        if (!try_insns(gen, o, t, (uint64_t)u, &rate, &k, &c, err))
            return false;
        res->user_insns = (uint64_t)u;
        res->realised = rate;
        res->rounds = round_;
        if (fabs(rate / t->rate - 1) <= GEN_RATE_TOLERANCE)
            return true;
        double left = 1.0 / t->rate - k;
        if (left <= 0 || (u <= 1 && rate < t->rate)) {
            g_set_error(err, GEN_ERROR, GEN_ERROR_OPTION,
                        "--rate %.0f: out of reach for %s on %s: its system calls alone "
                        "take %.3f us each under " BASELINE_LAYOUT "%s, so at most about %.0f "
                        "per second", t->rate, gen->name, t->preset->name, k * 1e6,
                        t->paging == PAGING_LEGACY ? " (legacy paging)" : "", 1.0 / k);
            return false;
        }
        double next = fmax(1.0, round(left / c));
        if (next > 1e15) {
            g_set_error(err, GEN_ERROR, GEN_ERROR_OPTION,
                        "--rate %g: too low (more than 10^15 user instructions per syscall)",
                        t->rate);
            return false;
        }
        if (next == u)       /* the grain of one instruction: as close as it gets */
            return true;
        u = next;
    }
    g_set_error(err, GEN_ERROR, GEN_ERROR_OPTION,
                "--rate %.0f: %s reached %.0f per second after %u replays on %s (expected "
                "within %.1f %%)", t->rate, gen->name, res->realised, GEN_RATE_MAX_ROUNDS,
                t->preset->name, 100 * GEN_RATE_TOLERANCE);
    return false;
}
