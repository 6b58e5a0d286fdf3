/* Replay outputs: a perf-stat-like table, JSON, CSV, and compare. */
#include "replay/replay.h"

#include <string.h>

static double us(const ReplayResult *r, double cycles)
{
    return cycles / replay_config(r)->preset->clock_mhz;
}

static uint64_t tlbv(const TlbStats *s, const char *name)
{
    uint64_t v = 0;
    tlb_stats_get(s, name, &v);
    return v;
}

/* Version 2: the programs' own references and their page faults. */
static void replay_print_refs_text(const ReplayResult *r, FILE *out)
{
    const ReplayRefs *rf = replay_refs(r);
    if (!rf->has_refs)
        return;
    double total = (double)replay_totals(r)->cycles;
    fprintf(out, "\nprogram references (trace version 2)\n");
    fprintf(out, "%18" G_GUINT64_FORMAT "     references (instructions fetched + data)\n",
            rf->refs);
    fprintf(out, "%18" G_GUINT64_FORMAT "     reference lines in %" G_GUINT64_FORMAT
                 " refs events\n", rf->lines, rf->events);
    fprintf(out, "%18" G_GUINT64_FORMAT "     cycles of user-work refills (TLB walks of the "
                 "program's references)\n", rf->walk_cycles);
    if (rf->collisions)
        fprintf(out, "%18" G_GUINT64_FORMAT "     references to pages the model maps itself "
                     "(no fault; writes to its code page made as reads)\n", rf->collisions);
    const UserMmStats *f = &rf->faults;
    uint64_t n = 0, fc = replay_fault_cycles(r);
    for (int k = 0; k < UFAULT_KINDS; k++)
        n += f->count[k];
    fprintf(out, "\npage faults   %10s %12s %10s %8s\n", "count", "cycles", "mean cyc",
            "% time");
    for (int k = 0; k < UFAULT_KINDS; k++)
        fprintf(out, "  %-12s %10" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT " %10.0f %7.2f%%\n",
                usermm_fault_name((UserFaultKind)k), f->count[k], f->cycles[k],
                f->count[k] ? (double)f->cycles[k] / f->count[k] : 0.0,
                total ? 100.0 * f->cycles[k] / total : 0.0);
    fprintf(out, "  %-12s %10" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT " %10s %7.2f%%\n",
            "all", n, fc, "", total ? 100.0 * fc / total : 0.0);
    fprintf(out, "  (with %" G_GUINT64_FORMAT " TLB flushes after forks and %" G_GUINT64_FORMAT
                 " after execs; %" G_GUINT64_FORMAT " pages mapped at the end, %" G_GUINT64_FORMAT
                 " at peak)\n", f->fork_flushes, f->exec_flushes, f->pages_mapped, f->pages_peak);
}

void replay_print_text(const ReplayResult *r, const char *trace, FILE *out)
{
    const ReplayConfig *c = replay_config(r);
    const ReplayTotals *t = replay_totals(r);
    const TlbStats *tl = replay_tlb(r);
    fprintf(out, "vmsplit replay: %s on %s (%.0f MHz), layout %s, %.0f GiB RAM, %s\n\n", trace,
            c->preset->name, c->preset->clock_mhz, c->layout->name, c->ram / 1073741824.0,
            c->sysenter ? "sysenter" : "int 0x80");
    fprintf(out, "%18.6f s   simulated time\n", replay_seconds(r));
    for (size_t i = 0; i < replay_total_count(); i++)
        fprintf(out, "%18" G_GUINT64_FORMAT "     %-20s %s\n", replay_total_value(t, i),
                replay_total_name(i), replay_total_desc(i));
    if (t->syscalls)
        fprintf(out, "%18.1f     syscalls per simulated second\n", t->syscalls / replay_seconds(r));
    fprintf(out, "\nTLB           %12s %12s\n", "user", "kernel");
    static const char *rows[] = { "lookups", "misses", "dirty_walks" };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        char u[64], k[64];
        g_snprintf(u, sizeof u, "%s_user", rows[i]);
        g_snprintf(k, sizeof k, "%s_kernel", rows[i]);
        fprintf(out, "  %-12s %12" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT "\n", rows[i],
                tlbv(tl, u), tlbv(tl, k));
    }
    fprintf(out, "  ITLB misses %13" G_GUINT64_FORMAT "   DTLB misses %" G_GUINT64_FORMAT "\n",
            tlbv(tl, "misses_fetch"), tlbv(tl, "misses_read") + tlbv(tl, "misses_write"));
    fprintf(out, "  flushes: cr3 %" G_GUINT64_FORMAT " (dropped %" G_GUINT64_FORMAT "), invlpg %"
                 G_GUINT64_FORMAT " (dropped %" G_GUINT64_FORMAT "), pcid %" G_GUINT64_FORMAT
                 ", pge %" G_GUINT64_FORMAT "\n",
            tl->flushes_cr3, tl->dropped_cr3, tl->flushes_invlpg, tl->dropped_invlpg,
            tl->flushes_pcid, tl->flushes_pge);
    fprintf(out, "\n%-16s %9s %10s %9s %9s %9s  %8s %8s %8s %8s %8s\n", "syscall", "count",
            "mean cyc", "mean us", "p50 us", "p99 us", "base", "cr3", "walks", "uaccess", "body");
    for (guint i = 0; i < replay_nsyscalls(r); i++) {
        const ReplaySyscall *s = replay_syscall(r, i);
        double n = (double)s->hist.n;
        fprintf(out, "%-15s%s %9" G_GUINT64_FORMAT " %10.0f %9.3f %9.3f %9.3f  %8.0f %8.0f %8.0f %8.0f %8.0f\n",
                s->name, s->known ? " " : "*", s->hist.n, s->sum.cycles / n, us(r, s->sum.cycles / n),
                us(r, (double)lhist_quantile(&s->hist, 0.5)), us(r, (double)lhist_quantile(&s->hist, 0.99)),
                s->sum.base / n, s->sum.cr3 / n, s->sum.walks / n, s->sum.uaccess / n, s->sum.body / n);
    }
    if (t->unknown_syscalls)
        fprintf(out, "(* no profile of its own: the generic profile was used; %" G_GUINT64_FORMAT " calls)\n",
                t->unknown_syscalls);
    replay_print_refs_text(r, out);
    fprintf(out, "\nlowmem: %.1f MiB free after boot; the replay allocated %.2f MiB at peak, %.2f MiB at the end",
            t->lowmem_start_free / 1048576.0, t->lowmem_peak / 1048576.0, t->lowmem_end / 1048576.0);
    if (t->lowmem_exhausted_at >= 0)
        fprintf(out, "; EXHAUSTED at event %" G_GINT64_FORMAT, t->lowmem_exhausted_at);
    fprintf(out, "\nhost: %.2f s, %.0f syscalls per host second, simulated/host time ratio %.3f",
            replay_host_seconds(r), t->syscalls / replay_host_seconds(r),
            replay_seconds(r) / replay_host_seconds(r));
    /* How much user work was accounted without being executed (exactly:
     * kernel_model/userwork.h); on the host line, since it changes no
     * simulated figure. */
    const UserWorkSkips *ff = replay_fast_forward(r);
    if (t->user_insns)
        fprintf(out, "; %.1f%% of user instructions fast-forwarded", 100.0 * ff->insns / t->user_insns);
    if (replay_refs(r)->has_refs)
        fprintf(out, "; %.2f M references per host second",
                replay_refs(r)->refs / replay_host_seconds(r) / 1e6);
    fputc('\n', out);
    if (c->layout->what_if)
        fprintf(out, "note: %s is a what-if: PCID exists only in IA-32e paging, not on an i686 core.\n",
                c->layout->name);
}

static void json_u64(JsonBuilder *b, const char *name, uint64_t v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, (gint64)v);
}

/* Version 2 only: "refs" (references, refills) and "page_faults". */
static void replay_refs_to_json(const ReplayResult *r, JsonBuilder *b)
{
    const ReplayRefs *rf = replay_refs(r);
    if (!rf->has_refs)
        return;
    json_builder_set_member_name(b, "refs");
    json_builder_begin_object(b);
    json_u64(b, "events", rf->events);
    json_u64(b, "lines", rf->lines);
    json_u64(b, "references", rf->refs);
    json_u64(b, "insns", rf->insns);
    json_u64(b, "cycles", rf->cycles);
    json_u64(b, "refill_cycles", rf->walk_cycles);
    json_u64(b, "collisions", rf->collisions);
    json_builder_end_object(b);
    const UserMmStats *f = &rf->faults;
    json_builder_set_member_name(b, "page_faults");
    json_builder_begin_object(b);
    for (int k = 0; k < UFAULT_KINDS; k++) {
        json_builder_set_member_name(b, usermm_fault_name((UserFaultKind)k));
        json_builder_begin_object(b);
        json_u64(b, "count", f->count[k]);
        json_u64(b, "cycles", f->cycles[k]);
        json_builder_end_object(b);
    }
    json_u64(b, "cycles", replay_fault_cycles(r));
    json_u64(b, "fork_flushes", f->fork_flushes);
    json_u64(b, "exec_flushes", f->exec_flushes);
    json_u64(b, "pages_peak", f->pages_peak);
    json_builder_end_object(b);
}

void replay_to_json(const ReplayResult *r, JsonBuilder *b)
{
    const ReplayConfig *c = replay_config(r);
    const ReplayTotals *t = replay_totals(r);
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "cpu");
    json_builder_add_string_value(b, c->preset->name);
    json_builder_set_member_name(b, "layout");
    json_builder_add_string_value(b, c->layout->name);
    json_builder_set_member_name(b, "what_if");
    json_builder_add_boolean_value(b, c->layout->what_if);
    json_builder_set_member_name(b, "ram");
    json_builder_add_int_value(b, (gint64)c->ram);
    json_builder_set_member_name(b, "seconds");
    json_builder_add_double_value(b, replay_seconds(r));
    json_builder_set_member_name(b, "totals");
    json_builder_begin_object(b);
    for (size_t i = 0; i < replay_total_count(); i++) {
        json_builder_set_member_name(b, replay_total_name(i));
        json_builder_add_int_value(b, (gint64)replay_total_value(t, i));
    }
    json_builder_set_member_name(b, "lowmem_exhausted_at");
    json_builder_add_int_value(b, t->lowmem_exhausted_at);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "tlb");
    json_builder_begin_object(b);
    tlb_stats_to_json(replay_tlb(r), b);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "syscalls");
    json_builder_begin_array(b);
    for (guint i = 0; i < replay_nsyscalls(r); i++) {
        const ReplaySyscall *s = replay_syscall(r, i);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, s->name);
        json_builder_set_member_name(b, "known");
        json_builder_add_boolean_value(b, s->known);
        json_builder_set_member_name(b, "count");
        json_builder_add_int_value(b, (gint64)s->hist.n);
        json_builder_set_member_name(b, "p50_cycles");
        json_builder_add_int_value(b, (gint64)lhist_quantile(&s->hist, 0.5));
        json_builder_set_member_name(b, "p99_cycles");
        json_builder_add_int_value(b, (gint64)lhist_quantile(&s->hist, 0.99));
        for (size_t k = 0; k < syscall_cost_count(); k++) {
            json_builder_set_member_name(b, syscall_cost_name(k));
            json_builder_add_int_value(b, (gint64)syscall_cost_value(&s->sum, k));
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    replay_refs_to_json(r, b);
    json_builder_end_object(b);
}

/* CSV column names of replay_part_names, in the same order. */
static const char *const part_columns[REPLAY_NPARTS] = {
    "entry_exit", "cr3", "refills", "uaccess", "body", "user", "switches", "user_refills",
    "faults",
};

/* The header, once per CSV (compare prints every layout's rows under it).
 * paging is the layout's page-table format ("pae", "legacy"); it follows
 * the syscall so that the syscall stays field 3 (compare --uncertainty's
 * rows are found by it, cmd_compare.c).
 * The last columns are filled only in a layout's summary row (syscall
 * "ALL", replay_print_csv_summary): its overhead against the baseline and
 * where the extra cycles went, by part. */
void replay_print_csv_header(FILE *out)
{
    fprintf(out, "cpu,layout,syscall,paging,count,mean_cycles,mean_us,p50_us,p99_us");
    for (size_t k = 0; k < syscall_cost_count(); k++)
        fprintf(out, ",%s_total", syscall_cost_column(k));
    fprintf(out, ",syscalls_per_sec,overhead_pct");
    for (int p = 0; p < REPLAY_NPARTS; p++)
        fprintf(out, ",extra_%s_cycles", part_columns[p]);
    fprintf(out, "\n");
}

void replay_print_csv_summary(const ReplayResult *r, const ReplayResult *base, FILE *out)
{
    const ReplayConfig *c = replay_config(r);
    const ReplayTotals *t = replay_totals(r);
    SyscallCost sum = { 0 };
    for (guint i = 0; i < replay_nsyscalls(r); i++)
        syscall_cost_add(&sum, &replay_syscall(r, i)->sum);
    double n = (double)t->syscalls, secs = replay_seconds(r);
    fprintf(out, "%s,%s,ALL,%s,%" G_GUINT64_FORMAT ",%.1f,%.4f,,", c->preset->name,
            c->layout->name, c->layout->paging->name, t->syscalls, n ? sum.cycles / n : 0.0, n ? us(r, sum.cycles / n) : 0.0);
    for (size_t k = 0; k < syscall_cost_count(); k++)
        fprintf(out, ",%" G_GUINT64_FORMAT, syscall_cost_value(&sum, k));
    fprintf(out, ",%.2f,", secs > 0 ? n / secs : 0.0);
    if (base) {
        const ReplayTotals *b = replay_totals(base);
        fprintf(out, "%.4f", b->cycles ? 100.0 * ((double)t->cycles - b->cycles) / b->cycles : 0.0);
        double v[REPLAY_NPARTS], w[REPLAY_NPARTS];
        replay_breakdown(r, v);
        replay_breakdown(base, w);
        for (int p = 0; p < REPLAY_NPARTS; p++)
            fprintf(out, ",%.0f", v[p] - w[p]);
    } else {
        for (int p = 0; p < REPLAY_NPARTS; p++)
            fputc(',', out);
    }
    fprintf(out, "\n");
}

/* One row per syscall name, under replay_print_csv_header's columns. */
void replay_print_csv(const ReplayResult *r, FILE *out)
{
    const ReplayConfig *c = replay_config(r);
    for (guint i = 0; i < replay_nsyscalls(r); i++) {
        const ReplaySyscall *s = replay_syscall(r, i);
        double n = (double)s->hist.n;
        fprintf(out, "%s,%s,%s,%s,%" G_GUINT64_FORMAT ",%.1f,%.4f,%.4f,%.4f", c->preset->name,
                c->layout->name, s->name, c->layout->paging->name, s->hist.n, s->sum.cycles / n, us(r, s->sum.cycles / n),
                us(r, (double)lhist_quantile(&s->hist, 0.5)), us(r, (double)lhist_quantile(&s->hist, 0.99)));
        for (size_t k = 0; k < syscall_cost_count(); k++)
            fprintf(out, ",%" G_GUINT64_FORMAT, syscall_cost_value(&s->sum, k));
        fprintf(out, ",,");                       /* the summary row's columns */
        for (int p = 0; p < REPLAY_NPARTS; p++)
            fputc(',', out);
        fprintf(out, "\n");
    }
    /* Version 2: a row per page-fault kind, named "#pf:KIND" (no syscall
     * has a '#'), with its count, mean and total cycles; the percentile and
     * breakdown columns do not apply (empty). */
    const ReplayRefs *rf = replay_refs(r);
    for (int k = 0; rf->has_refs && k < UFAULT_KINDS; k++) {
        uint64_t n = rf->faults.count[k], cyc = rf->faults.cycles[k];
        double mean = n ? (double)cyc / n : 0;
        fprintf(out, "%s,%s,#pf:%s,%s,%" G_GUINT64_FORMAT ",%.1f,%.4f,,,%" G_GUINT64_FORMAT,
                c->preset->name, c->layout->name, usermm_fault_name((UserFaultKind)k),
                c->layout->paging->name, n, mean,
                us(r, mean), cyc);
        for (size_t j = 1; j < syscall_cost_count(); j++)
            fputc(',', out);
        fprintf(out, "\n");
    }
}

const char *const replay_part_names[REPLAY_NPARTS] = {
    "syscall entry/exit", "syscall CR3 writes", "syscall TLB refills", "syscall uaccess",
    "syscall body", "user work", "context switches", "user-work refills", "page faults",
};

void replay_breakdown(const ReplayResult *r, double parts[REPLAY_NPARTS])
{
    for (int p = 0; p < REPLAY_NPARTS; p++)
        parts[p] = 0;
    for (guint k = 0; k < replay_nsyscalls(r); k++) {
        const SyscallCost *s = &replay_syscall(r, k)->sum;
        parts[0] += s->base;
        parts[1] += s->cr3;
        parts[2] += s->walks;
        parts[3] += s->uaccess;
        parts[4] += s->body;
    }
    const ReplayRefs *rf = replay_refs(r);
    parts[5] = (double)replay_totals(r)->user_cycles - (double)rf->walk_cycles;
    parts[6] = (double)replay_totals(r)->switch_cycles;
    parts[REPLAY_PART_REFILLS] = (double)rf->walk_cycles;
    parts[REPLAY_PART_FAULTS] = (double)replay_fault_cycles(r);
}

static double pct(double a, double base) { return base ? 100.0 * (a - base) / base : 0; }

void replay_print_compare(ReplayResult *const *r, size_t n, const char *trace, FILE *out)
{
    const ReplayConfig *c0 = replay_config(r[0]);
    fprintf(out, "vmsplit compare: %s on %s (%.0f MHz), %.0f GiB RAM, %s; baseline %s\n\n", trace,
            c0->preset->name, c0->preset->clock_mhz, c0->ram / 1073741824.0,
            c0->sysenter ? "sysenter" : "int 0x80", c0->layout->name);
    fprintf(out, "%-24s", "");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%14s", replay_config(r[i])->layout->name);
    fprintf(out, "\n");
#define ROW(label, fmt, expr)                                                   \
    do {                                                                      \
        fprintf(out, "%-24s", label);                                         \
        for (size_t i = 0; i < n; i++)                                        \
            fprintf(out, fmt, (expr));                                        \
        fprintf(out, "\n");                                                   \
    } while (0)
    const ReplayTotals *b = replay_totals(r[0]);
    ROW("simulated time (ms)", "%14.3f", replay_seconds(r[i]) * 1e3);
    ROW("overhead (%)", "%+14.2f", pct(replay_totals(r[i])->cycles, b->cycles));
    ROW("syscalls per second", "%14.0f", replay_totals(r[i])->syscalls / replay_seconds(r[i]));
    ROW("CR3 writes", "%14" G_GUINT64_FORMAT, replay_totals(r[i])->cr3_writes);
    ROW("TLB entries dropped", "%14" G_GUINT64_FORMAT,
        replay_tlb(r[i])->dropped_cr3 + replay_tlb(r[i])->dropped_invlpg + replay_tlb(r[i])->dropped_pcid);
    ROW("page walks", "%14" G_GUINT64_FORMAT, replay_totals(r[i])->walks);
    ROW("kmaps", "%14" G_GUINT64_FORMAT, replay_totals(r[i])->kmaps);
    ROW("lowmem peak (KiB)", "%14.0f", replay_totals(r[i])->lowmem_peak / 1024.0);
    fprintf(out, "\nwhere the extra cycles went (against %s, millions of cycles)\n", c0->layout->name);
    double base[REPLAY_NPARTS];
    replay_breakdown(r[0], base);
    bool refs = false;
    for (size_t i = 0; i < n; i++)
        refs |= replay_refs(r[i])->has_refs;
    for (int p = 0; p < REPLAY_NPARTS; p++) {
        if (p >= REPLAY_PART_REFILLS && !refs)
            continue;                /* version 1: no program references, no faults */
        fprintf(out, "  %-22s", replay_part_names[p]);
        for (size_t i = 0; i < n; i++) {
            double v[REPLAY_NPARTS];
            replay_breakdown(r[i], v);
            fprintf(out, "%+14.3f", (v[p] - base[p]) / 1e6);
        }
        fprintf(out, "\n");
    }
    ROW("  total", "%+14.3f", ((double)replay_totals(r[i])->cycles - b->cycles) / 1e6);
    if (refs) {
        fprintf(out, "\npage faults (count; share of the time)\n");
        for (int k = 0; k < UFAULT_KINDS; k++)
            ROW(usermm_fault_name((UserFaultKind)k), "%14" G_GUINT64_FORMAT,
                replay_refs(r[i])->faults.count[k]);
        ROW("% of the time", "%13.2f%%",
            replay_totals(r[i])->cycles ? 100.0 * replay_fault_cycles(r[i]) /
                                              replay_totals(r[i])->cycles : 0.0);
        ROW("% of the extra time", "%13.2f%%",
            replay_totals(r[i])->cycles > b->cycles
                ? 100.0 * ((double)replay_fault_cycles(r[i]) - (double)replay_fault_cycles(r[0])) /
                      ((double)replay_totals(r[i])->cycles - (double)b->cycles)
                : 0.0);
    }
    fprintf(out, "\nmean latency per syscall (us)\n");
    for (guint k = 0; k < replay_nsyscalls(r[0]) && k < 12; k++) {
        const char *name = replay_syscall(r[0], k)->name;
        fprintf(out, "  %-22s", name);
        for (size_t i = 0; i < n; i++) {
            double v = 0;
            for (guint j = 0; j < replay_nsyscalls(r[i]); j++) {
                const ReplaySyscall *s = replay_syscall(r[i], j);
                if (s->name == name)
                    v = us(r[i], (double)s->sum.cycles / s->hist.n);
            }
            fprintf(out, "%14.3f", v);
        }
        fprintf(out, "\n");
    }
#undef ROW
    for (size_t i = 0; i < n; i++) {
        const Layout *l = replay_config(r[i])->layout;
        if (!l->what_if)
            continue;
        fprintf(out, "\nnote: %s is a what-if: PCID exists only in IA-32e paging, not on an i686 core.\n",
                l->name);
        /* Why it can beat 3g1g: each task's entries carry its own PCID, so
         * a context switch keeps them, where a layout without PCID drops
         * every non-global entry at the switch's CR3 write. */
        if (l->pcid && replay_totals(r[i])->switches > 0)
            fprintf(out, "      Each task has its own PCID, so its %" G_GUINT64_FORMAT
                         " context switches drop no TLB entries;\n"
                         "      layouts without PCID flush at every switch, so %s can come out "
                         "below them.\n",
                    replay_totals(r[i])->switches, l->name);
    }
}
