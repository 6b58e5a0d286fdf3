/* Small helpers shared by the subcommands: size parsing, exit-status
 * conventions, GError reporting. */
#ifndef VMSPLIT_CLI_UTIL_H
#define VMSPLIT_CLI_UTIL_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define VMS_EXIT_OK 0
#define VMS_EXIT_FAULT 1
#define VMS_EXIT_USAGE 2

/* Print "vmsplit CMD: message" for err to stderr and return VMS_EXIT_USAGE. */
int cli_fail(const char *cmd, GError *err);

/* Parse an option context; on error print it with the command name and
 * return false. */
bool cli_parse(GOptionContext *ctx, int *argc, char ***argv, const char *cmd);

/* Print the builder's root as pretty JSON on stdout and free the builder. */
#include <json-glib/json-glib.h>
void cli_print_json(JsonBuilder *b);

/* Whether kv is a --header argument: KEY=VALUE, KEY of [a-z0-9-]+ (a trace
 * header key), VALUE one line. */
bool cli_header_kv_valid(const char *kv);

/* Parse "64G", "896M", "4096K", "123" (bytes) into bytes. */
bool cli_parse_size(const char *s, uint64_t *out);

#endif
