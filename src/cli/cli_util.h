/* Small helpers shared by the subcommands: size parsing, exit-status
 * conventions, GError reporting. */
#ifndef VMSPLIT_CLI_UTIL_H
#define VMSPLIT_CLI_UTIL_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernel_model/ptformat.h"

#define VMS_EXIT_OK 0
#define VMS_EXIT_FAULT 1
#define VMS_EXIT_USAGE 2

/* Print "vmsplit CMD: message" for err to stderr and return VMS_EXIT_USAGE. */
int cli_fail(const char *cmd, GError *err);

/* Parse an option context; on error print it with the command name and
 * return false. */
bool cli_parse(GOptionContext *ctx, int *argc, char ***argv, const char *cmd);

/* Print the builder's root as pretty JSON on stdout and free the builder.
 * An object root gains "schema": "vmsplit.CMD/CLI_JSON_SCHEMA". */
#include <json-glib/json-glib.h>
#define CLI_JSON_SCHEMA 1
void cli_print_json(JsonBuilder *b);
/* The same, leaving the builder to its owner. */
void cli_print_json_keep(JsonBuilder *b);
/* The same for JSON text a library made; false if it does not parse. */
bool cli_print_json_text(const char *text);

/* Whether kv is a --header argument: KEY=VALUE, KEY of [a-z0-9-]+ (a trace
 * header key), VALUE one line. */
bool cli_header_kv_valid(const char *kv);

/* Parse "64G", "896M", "4096K", "123" (bytes) into bytes. */
bool cli_parse_size(const char *s, uint64_t *out);

/* The shared option vocabulary (docs/options.md: every option's name,
 * letter, argument and meaning; tests/cli/test_usage_cli.c holds every
 * command to it). Ranges that more than one command checks live here, so
 * that each command accepts the same values and says the same thing. */
#define CLI_STRUCT_PAGE_MIN 16     /* sizeof(struct page): 32-44 B on i386 (REFERENCES.md) */
#define CLI_STRUCT_PAGE_MAX 256
#define CLI_JOBS_MAX 64            /* threads: replays share nothing, each a few MB */

/* A whole number for option --opt of command cmd, from min to max. Else
 * print "vmsplit CMD: --OPT: expected a whole number from MIN to MAX, got
 * 'TEXT'" and return false. */
bool cli_opt_uint(const char *cmd, const char *opt, const char *text, uint64_t min,
                  uint64_t max, uint64_t *out);

/* --paging pae|legacy (syscall, replay, compare, sweep, claim): the page-
 * table format every layout is built in (kernel_model/ptformat.h). NULL
 * text: pae. Else print "vmsplit CMD: --paging: expected pae or legacy,
 * got 'TEXT'" and return false. */
#define CLI_PAGING_HELP "page tables: pae (3-level, the default) or legacy (2-level, 4 GiB of RAM at most)"
bool cli_opt_paging(const char *cmd, const char *text, PagingMode *out);
/* Whether ram fits the paging mode's physical limit; else print "vmsplit
 * CMD: --ram SIZE: legacy (non-PAE) paging addresses at most 4 GiB of RAM;
 * use --paging pae or a smaller --ram" and return false (exit status 2). */
bool cli_check_ram_paging(const char *cmd, uint64_t ram, PagingMode mode);

#endif
