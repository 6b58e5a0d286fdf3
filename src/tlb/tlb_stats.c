/* TLB statistics: the item table generated from tlb_stats.def and the
 * printers that read it. See tlb_stats.h. */
#include "tlb/tlb_stats.h"

#include <glib.h>
#include <string.h>

/* Which part of a [access][priv] matrix an item reads. */
typedef enum {
    SEL_PLAIN,                   /* a COUNT: a single uint64_t */
    SEL_TOTAL,
    SEL_FETCH, SEL_READ, SEL_WRITE,
    SEL_USER, SEL_KERNEL,
} Sel;

typedef struct {
    const char *name;
    const char *description;
    size_t offset;
    Sel sel;
} ItemDesc;

static const ItemDesc items[] = {
#define TLB_STAT_EVENT(field, name, desc)                                       \
    { name, desc, offsetof(TlbStats, field), SEL_TOTAL },                       \
    { name "_fetch", desc " (instruction fetches)", offsetof(TlbStats, field), SEL_FETCH }, \
    { name "_read", desc " (data reads)", offsetof(TlbStats, field), SEL_READ }, \
    { name "_write", desc " (data writes)", offsetof(TlbStats, field), SEL_WRITE }, \
    { name "_user", desc " (CPL 3)", offsetof(TlbStats, field), SEL_USER },     \
    { name "_kernel", desc " (CPL 0-2)", offsetof(TlbStats, field), SEL_KERNEL },
#define TLB_STAT_COUNT(field, name, desc) { name, desc, offsetof(TlbStats, field), SEL_PLAIN },
#include "tlb/tlb_stats.def"
#undef TLB_STAT_EVENT
#undef TLB_STAT_COUNT
};

size_t tlb_stats_count(void)
{
    return G_N_ELEMENTS(items);
}

static uint64_t item_value(const TlbStats *s, const ItemDesc *d)
{
    const char *base = (const char *)s + d->offset;
    if (d->sel == SEL_PLAIN) {
        uint64_t v;
        memcpy(&v, base, sizeof v);
        return v;
    }
    uint64_t m[TLB_NACCESS][2];
    memcpy(m, base, sizeof m);
    uint64_t v = 0;
    for (int a = 0; a < TLB_NACCESS; a++)
        for (int p = 0; p < 2; p++) {
            bool take;
            switch (d->sel) {
            case SEL_FETCH: take = a == ACCESS_EXEC; break;
            case SEL_READ: take = a == ACCESS_READ; break;
            case SEL_WRITE: take = a == ACCESS_WRITE; break;
            case SEL_USER: take = p == TLB_PRIV_USER; break;
            case SEL_KERNEL: take = p == TLB_PRIV_KERNEL; break;
            default: take = true; break;
            }
            if (take)
                v += m[a][p];
        }
    return v;
}

TlbStatItem tlb_stats_item(const TlbStats *s, size_t i)
{
    g_assert(i < G_N_ELEMENTS(items));
    const ItemDesc *d = &items[i];
    return (TlbStatItem){ d->name, d->description, item_value(s, d) };
}

bool tlb_stats_get(const TlbStats *s, const char *name, uint64_t *value)
{
    for (size_t i = 0; i < G_N_ELEMENTS(items); i++)
        if (strcmp(items[i].name, name) == 0) {
            *value = item_value(s, &items[i]);
            return true;
        }
    return false;
}

/* TlbStats is nothing but uint64_t counters, so it adds as an array. */
void tlb_stats_add(TlbStats *dst, const TlbStats *src)
{
    G_STATIC_ASSERT(sizeof(TlbStats) % sizeof(uint64_t) == 0);
    uint64_t a[sizeof(TlbStats) / sizeof(uint64_t)], b[G_N_ELEMENTS(a)];
    memcpy(a, dst, sizeof a);
    memcpy(b, src, sizeof b);
    for (size_t i = 0; i < G_N_ELEMENTS(a); i++)
        a[i] += b[i];
    memcpy(dst, a, sizeof a);
}

void tlb_stats_print_table(FILE *out, size_t ncols, const char *const titles[],
                           const TlbStats *const stats[], bool skip_zero)
{
    int namew = 4;
    for (size_t i = 0; i < G_N_ELEMENTS(items); i++)
        namew = MAX(namew, (int)strlen(items[i].name));
    int colw = 12;
    for (size_t c = 0; c < ncols; c++)
        colw = MAX(colw, (int)strlen(titles[c]));

    fprintf(out, "%-*s", namew, "");
    for (size_t c = 0; c < ncols; c++)
        fprintf(out, "  %*s", colw, titles[c]);
    fputc('\n', out);
    for (size_t i = 0; i < G_N_ELEMENTS(items); i++) {
        bool all_zero = true;
        for (size_t c = 0; c < ncols; c++)
            all_zero = all_zero && item_value(stats[c], &items[i]) == 0;
        if (skip_zero && all_zero)
            continue;
        fprintf(out, "%-*s", namew, items[i].name);
        for (size_t c = 0; c < ncols; c++)
            fprintf(out, "  %*" G_GUINT64_FORMAT, colw,
                    item_value(stats[c], &items[i]));
        fputc('\n', out);
    }
}

void tlb_stats_csv_header(FILE *out, const char *prefix)
{
    for (size_t i = 0; i < G_N_ELEMENTS(items); i++)
        fprintf(out, "%s%s%s", i ? "," : "", prefix ? prefix : "", items[i].name);
}

void tlb_stats_csv_row(FILE *out, const TlbStats *s)
{
    for (size_t i = 0; i < G_N_ELEMENTS(items); i++)
        fprintf(out, "%s%" G_GUINT64_FORMAT, i ? "," : "", item_value(s, &items[i]));
}

void tlb_stats_to_json(const TlbStats *s, JsonBuilder *b)
{
    for (size_t i = 0; i < G_N_ELEMENTS(items); i++) {
        json_builder_set_member_name(b, items[i].name);
        json_builder_add_int_value(b, (gint64)item_value(s, &items[i]));
    }
}
