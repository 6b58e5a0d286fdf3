/* A program with a known memory pattern, for the capture tests (issue 18).
 *
 *   pagetouch N R [fork|thread]
 *
 * Maps N+2 anonymous pages with mmap (so that no other data shares them)
 * and, R times, calls getppid, writes one int into each of the N pages in
 * the middle of the mapping (in order, at offset 0x123 of each), and calls
 * getppid again. Between the two getppid calls of a round, the program's
 * data references therefore touch exactly those N pages (besides its stack
 * page: the loop keeps everything in registers at -O1 and above, and the
 * test allows the stack). With `fork`, a child process does the same rounds
 * after the parent's; with `thread`, a second thread does (the parent
 * joins it); with `straddle`, one 8-byte store across a page boundary
 * follows between two more getppid calls; with `crash`, it then dies of
 * SIGSEGV; with `exec`, the process then execs itself for R more rounds.
 * Written for the test, with no libc calls inside a round. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long npages, rounds;
static volatile char *area;

static void *run_rounds(void *arg)
{
    (void)arg;
    for (long r = 0; r < rounds; r++) {
        syscall(SYS_getppid);
        for (long p = 0; p < npages; p++)
            *(volatile int *)(area + (p + 1) * 4096 + 0x123) = (int)(r + p);
        syscall(SYS_getppid);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: pagetouch N R [fork|thread]\n");
        return 2;
    }
    npages = strtol(argv[1], NULL, 10);
    rounds = strtol(argv[2], NULL, 10);
    area = mmap(NULL, (size_t)(npages + 2) * 4096, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) return 1;
    run_rounds(NULL);
    if (argc > 3 && argv[3][0] == 'f') {
        pid_t c = fork();
        if (c == 0) {
            run_rounds(NULL);
            _exit(0);
        }
        int st;
        waitpid(c, &st, 0);
    } else if (argc > 3 && argv[3][0] == 't') {
        pthread_t t;
        pthread_create(&t, NULL, run_rounds, NULL);
        pthread_join(t, NULL);
    } else if (argc > 3 && argv[3][0] == 's') {
        /* one 8-byte store that straddles two pages of the area: 4 bytes
         * at the end of its second page, 4 at the start of its third */
        uint64_t v = 0x1122334455667788ull;
        syscall(SYS_getppid);
        __builtin_memcpy((char *)area + 2 * 4096 - 4, &v, sizeof v);
        syscall(SYS_getppid);
    } else if (argc > 3 && argv[3][0] == 'c') {
        /* crash: a store to page 0 (SIGSEGV), after the rounds */
        volatile int *low = (volatile int *)(uintptr_t)argc; /* address 4: never mapped */
        *low = 1;
    } else if (argc > 3 && argv[3][0] == 'e') {
        /* exec: the same program again (argv[0] must be its path: under
         * Valgrind /proc/self/exe is the tool), without the mode argument */
        execl(argv[0], argv[0], argv[1], argv[2], (char *)NULL);
        return 1;
    }
    return 0;
}
