/* Replays with and without the host-speed shortcuts: the user-work
 * fast-forward (kernel_model/userwork.h), and the decoded-instruction
 * cache with the MMU's memos of TLB hits (machine_set_host_shortcuts). A
 * real trace must give the same report, to the byte, either way; only the
 * host-speed line of the text report may differ. The fast-forward must have skipped most
 * of the trace's user instructions (sqlite: 46.6 M over 448 events on a
 * 2-page span), so the comparison is not vacuous. The CLI's
 * --no-fast-forward gives the same output as the default.
 *
 * Usage: test-replay-ffwd PATH-TO-VMSPLIT */
#include <check.h>
#include <gio/gio.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preset/preset.h"
#include "replay/replay.h"

static const char *vmsplit_exe;

static char *trace_path(const char *name)
{
    const char *src = g_getenv("VMSPLIT_SOURCE_DIR");
    ck_assert_msg(src, "VMSPLIT_SOURCE_DIR is not set");
    return g_build_filename(src, "workloads", "traces", name, NULL);
}

static ReplayResult *replay(const Preset *p, const char *layout, const char *trace, bool ffwd,
                            bool shortcuts)
{
    ReplayConfig cfg = { .preset = p, .layout = layout_find(layout), .ram = 4ULL << 30,
                         .no_fast_forward = !ffwd, .no_host_shortcuts = !shortcuts };
    GError *err = NULL;
    ReplayResult *r = replay_run(&cfg, trace, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    return r;
}

static char *as_json(const ReplayResult *r)
{
    JsonBuilder *b = json_builder_new();
    replay_to_json(r, b);
    JsonGenerator *g = json_generator_new();
    JsonNode *n = json_builder_get_root(b);
    json_generator_set_root(g, n);
    json_generator_set_pretty(g, TRUE);
    char *s = json_generator_to_data(g, NULL);
    json_node_unref(n);
    g_object_unref(g);
    g_object_unref(b);
    return s;
}

/* The text report without its host-speed line. */
static char *as_text(const ReplayResult *r, const char *trace)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert(f);
    replay_print_text(r, trace, f);
    fclose(f);
    GString *out = g_string_new(NULL);
    char **lines = g_strsplit(buf, "\n", -1);
    for (char **l = lines; *l; l++)
        if (!g_str_has_prefix(*l, "host:"))
            g_string_append_printf(out, "%s\n", *l);
    g_strfreev(lines);
    free(buf);
    return g_string_free(out, FALSE);
}

/* Replay name both ways (fast-forward or host shortcuts off in the
 * second) and require the same reports; returns the two results. */
static void compare(const char *preset, const char *layout, const char *name, bool ffwd_off,
                    ReplayResult **on, ReplayResult **off)
{
    GError *err = NULL;
    Preset *p = preset_load(preset, &err);
    ck_assert_msg(p, "%s", err ? err->message : "");
    char *trace = trace_path(name);
    *on = replay(p, layout, trace, true, true);
    *off = replay(p, layout, trace, !ffwd_off, ffwd_off);
    char *jon = as_json(*on), *joff = as_json(*off);
    ck_assert_str_eq(jon, joff);
    char *ton = as_text(*on, trace), *toff = as_text(*off, trace);
    ck_assert_str_eq(ton, toff);
    g_free(jon);
    g_free(joff);
    g_free(ton);
    g_free(toff);
    g_free(trace);
    preset_free(p);
}

static void same_report(const char *preset, const char *layout, const char *name)
{
    ReplayResult *on, *off;
    compare(preset, layout, name, true, &on, &off);
    /* Not vacuous: most user instructions were skipped with it on, none
     * without it. */
    uint64_t user = replay_totals(on)->user_insns;
    ck_assert_uint_gt(replay_fast_forward(on)->insns, user / 2);
    ck_assert_uint_eq(replay_fast_forward(off)->insns, 0);
    ck_assert_uint_gt(replay_fast_forward(on)->reused, 0);   /* the learned cycles too */
    replay_result_free(on);
    replay_result_free(off);
}

/* The decoded cache and the MMU's memos: the CR3 writes of 4g4g, kpti
 * (flushes) and kpti-pcid (PCID switches without a flush) are where a memo
 * of a stale hit would show. */
static void same_without_shortcuts(const char *preset, const char *layout, const char *name)
{
    ReplayResult *on, *off;
    compare(preset, layout, name, false, &on, &off);
    ck_assert_uint_gt(replay_totals(on)->cr3_writes, 0);
    replay_result_free(on);
    replay_result_free(off);
}

START_TEST(shortcuts_pipeline_p4_4g4g) { same_without_shortcuts("p4-northwood", "4g4g", "pipeline.vmt"); }
END_TEST

START_TEST(shortcuts_http_skylake_kpti_pcid) { same_without_shortcuts("skylake", "kpti-pcid", "http.vmt"); }
END_TEST

START_TEST(shortcuts_sqlite_core2_kpti) { same_without_shortcuts("core2", "kpti", "sqlite.vmt"); }
END_TEST

START_TEST(shortcuts_dd_p3_3g1g) { same_without_shortcuts("p3-coppermine", "3g1g", "dd.vmt"); }
END_TEST

START_TEST(sqlite_p4_4g4g) { same_report("p4-northwood", "4g4g", "sqlite.vmt"); }
END_TEST

START_TEST(sqlite_skylake_3g1g) { same_report("skylake", "3g1g", "sqlite.vmt"); }
END_TEST

START_TEST(dd_p4_3g1g) { same_report("p4-northwood", "3g1g", "dd.vmt"); }
END_TEST

/* pipeline reuses learned cycles across different system calls (entries
 * and lines the loop never reaches in another order:
 * mmu_state_part_equivalent) in most of its runs. */
START_TEST(pipeline_p4_4g4g) { same_report("p4-northwood", "4g4g", "pipeline.vmt"); }
END_TEST

/* stdout of vmsplit with args, its host-speed line removed. */
static char *run_cli(const char *const *args)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)vmsplit_exe);
    for (const char *const *a = args; *a; a++)
        g_ptr_array_add(argv, (gpointer)*a);
    g_ptr_array_add(argv, NULL);
    GError *err = NULL;
    GSubprocess *sp = g_subprocess_newv((const char *const *)argv->pdata,
                                        G_SUBPROCESS_FLAGS_STDOUT_PIPE, &err);
    ck_assert_msg(sp, "%s", err ? err->message : "");
    char *out = NULL;
    ck_assert(g_subprocess_communicate_utf8(sp, NULL, NULL, &out, NULL, &err));
    ck_assert(g_subprocess_get_if_exited(sp));
    ck_assert_int_eq(g_subprocess_get_exit_status(sp), 0);
    g_object_unref(sp);
    g_ptr_array_free(argv, TRUE);
    GString *s = g_string_new(NULL);
    char **lines = g_strsplit(out, "\n", -1);
    for (char **l = lines; *l; l++)
        if (!g_str_has_prefix(*l, "host:"))
            g_string_append_printf(s, "%s\n", *l);
    g_strfreev(lines);
    g_free(out);
    return g_string_free(s, FALSE);
}

START_TEST(cli_flag)
{
    ck_assert_msg(vmsplit_exe, "usage: test-replay-ffwd PATH-TO-VMSPLIT");
    char *trace = trace_path("dd.vmt");
    const char *with[] = { "replay", "--cpu", "p4-northwood", "--layout", "4g4g",
                           "--no-progress", trace, NULL };
    const char *without[] = { "replay", "--cpu", "p4-northwood", "--layout", "4g4g",
                              "--no-progress", "--no-fast-forward", trace, NULL };
    char *a = run_cli(with), *b = run_cli(without);
    ck_assert(strstr(a, "cycles"));
    ck_assert_str_eq(a, b);
    g_free(a);
    g_free(b);
    g_free(trace);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("replay-ffwd");
    TCase *t = tcase_create("same-report");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, sqlite_p4_4g4g);
    tcase_add_test(t, sqlite_skylake_3g1g);
    tcase_add_test(t, dd_p4_3g1g);
    tcase_add_test(t, pipeline_p4_4g4g);
    tcase_add_test(t, cli_flag);
    tcase_add_test(t, shortcuts_pipeline_p4_4g4g);
    tcase_add_test(t, shortcuts_http_skylake_kpti_pcid);
    tcase_add_test(t, shortcuts_sqlite_core2_kpti);
    tcase_add_test(t, shortcuts_dd_p3_3g1g);
    suite_add_tcase(s, t);
    return s;
}

int main(int argc, char **argv)
{
    vmsplit_exe = argc > 1 ? argv[1] : NULL;
    SRunner *r = srunner_create(suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
