/* Result CSVs read back by `vmsplit merge`, `plot`, `claim` and sweep
 * resume (src/report/csv.c: csv_read_buffer). The first input byte picks
 * the read flags (torn last record allowed, empty file allowed). */
#include "fuzz.h"

#include "report/csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    GError *e = NULL;
    CsvTable *t = csv_read_buffer("fuzz.csv", (const char *)data + 1, size - 1,
                                  (CsvReadFlags)(data[0] & 3), &e);
    if (!t) {
        fuzz_check_error(e);
        return 0;
    }
    csv_table_free(t);
    return 0;
}
