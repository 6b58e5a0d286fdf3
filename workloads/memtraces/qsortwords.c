/* Sort the words of a text and count distinct ones: a small real program
 * whose memory references vmsplit's tlbsim replays (workloads/memtraces). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
int main(int argc, char **argv) {
    FILE *f = fopen(argc > 1 ? argv[1] : "/dev/stdin", "r");
    if (!f) return 2;
    static char buf[1 << 16]; size_t n = fread(buf, 1, sizeof buf - 1, f); buf[n] = 0;
    char *words[8192]; int nw = 0;
    for (char *t = strtok(buf, " \n\t.,;:()\"'"); t && nw < 8192; t = strtok(NULL, " \n\t.,;:()\"'")) words[nw++] = t;
    qsort(words, nw, sizeof *words, cmp);
    int distinct = nw > 0;
    for (int i = 1; i < nw; i++) distinct += strcmp(words[i], words[i-1]) != 0;
    printf("%d words, %d distinct\n", nw, distinct);
    return 0;
}
