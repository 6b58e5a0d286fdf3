/* vmsplit subcommands. Each takes the argument vector with argv[0] set to
 * the subcommand's name and returns the process exit status:
 *   0  success
 *   1  the simulated machine reported an architectural fault (walk) or a
 *      comparison failed its check
 *   2  bad input: the message on stderr names the file, line and what was
 *      expected. */
#ifndef VMSPLIT_CLI_COMMANDS_H
#define VMSPLIT_CLI_COMMANDS_H

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} VmsCommand;

/* The table lives in main.c; one line per subcommand. */
extern const VmsCommand vms_commands[];

/* Declarations, one per subcommand (keep in the order of the table). */
int cmd_walk(int argc, char **argv);
int cmd_tlbsim(int argc, char **argv);
int cmd_syscall(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_claim(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_meminfo(int argc, char **argv);
int cmd_presets(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_import_strace(int argc, char **argv);
int cmd_import_capture(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_validate(int argc, char **argv);

#endif
