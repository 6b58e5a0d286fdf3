/* The folding map: a sorted array of regions (original [os, oe) -> folded
 * fs) and a sorted free list of the folded window. Mappings are few
 * (hundreds); references are many, so lookups remember the last region. */
#include "replay/capture_fold.h"

#include "replay/trace.h"

typedef struct {
    uint64_t os, oe, fs;
} Region;

typedef struct {
    uint64_t start, end;
} Span;

struct CaptureFold {
    GArray *regions; /* Region, sorted by os, disjoint */
    GArray *free;    /* Span, sorted, disjoint, coalesced */
    guint last;      /* index of the last region a lookup hit */
};

static uint64_t page_down(uint64_t a) { return a & ~(CAPTURE_PAGE - 1); }
static uint64_t page_up(uint64_t a) { return (a + CAPTURE_PAGE - 1) & ~(CAPTURE_PAGE - 1); }

CaptureFold *capture_fold_new(void)
{
    CaptureFold *f = g_new0(CaptureFold, 1);
    f->regions = g_array_new(FALSE, FALSE, sizeof(Region));
    f->free = g_array_new(FALSE, FALSE, sizeof(Span));
    Span all = {CAPTURE_FOLD_LOW, CAPTURE_FOLD_HIGH};
    g_array_append_val(f->free, all);
    return f;
}

CaptureFold *capture_fold_copy(const CaptureFold *f)
{
    CaptureFold *c = g_new0(CaptureFold, 1);
    c->regions = g_array_copy(f->regions);
    c->free = g_array_copy(f->free);
    return c;
}

void capture_fold_free(CaptureFold *f)
{
    if (!f)
        return;
    g_array_free(f->regions, TRUE);
    g_array_free(f->free, TRUE);
    g_free(f);
}

static Region *reg(CaptureFold *f, guint i) { return &g_array_index(f->regions, Region, i); }

/* Index of the first region whose end is above a. */
static guint first_above(CaptureFold *f, uint64_t a)
{
    guint lo = 0, hi = f->regions->len;
    while (lo < hi) {
        guint mid = (lo + hi) / 2;
        if (reg(f, mid)->oe <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void free_span(CaptureFold *f, uint64_t start, uint64_t end)
{
    guint i = 0;
    while (i < f->free->len && g_array_index(f->free, Span, i).start < start)
        i++;
    Span s = {start, end};
    g_array_insert_val(f->free, i, s);
    /* coalesce with the next, then with the previous */
    if (i + 1 < f->free->len && g_array_index(f->free, Span, i + 1).start == end) {
        g_array_index(f->free, Span, i).end = g_array_index(f->free, Span, i + 1).end;
        g_array_remove_index(f->free, i + 1);
    }
    if (i > 0 && g_array_index(f->free, Span, i - 1).end == start) {
        g_array_index(f->free, Span, i - 1).end = g_array_index(f->free, Span, i).end;
        g_array_remove_index(f->free, i);
    }
}

static bool alloc_span(CaptureFold *f, uint64_t size, uint64_t *out)
{
    for (guint i = 0; i < f->free->len; i++) {
        Span *s = &g_array_index(f->free, Span, i);
        if (s->end - s->start >= size) {
            *out = s->start;
            s->start += size;
            if (s->start == s->end)
                g_array_remove_index(f->free, i);
            return true;
        }
    }
    return false;
}

static void insert_region(CaptureFold *f, Region r)
{
    guint i = first_above(f, r.os);
    g_array_insert_val(f->regions, i, r);
    f->last = i;
}

/* Maps the gap [s, e), which no region overlaps. */
static bool map_gap(CaptureFold *f, uint64_t s, uint64_t e, uint64_t grow, GError **err)
{
    guint i = first_above(f, s);
    uint64_t floor = i > 0 ? reg(f, i - 1)->oe : 0;
    if (grow > s - floor)
        grow = s - floor;
    uint64_t base;
    if (!alloc_span(f, e - s + grow, &base)) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                    "the process maps more than the folded user window holds: %" G_GUINT64_FORMAT
                    " KiB at 0x%" G_GINT64_MODIFIER "x do not fit in [0x%llx, 0x%llx) beside the %"
                    G_GUINT64_FORMAT " KiB already folded",
                    (e - s + grow) / 1024, s, CAPTURE_FOLD_LOW, CAPTURE_FOLD_HIGH,
                    capture_fold_used(f) / 1024);
        return false;
    }
    Region r = {s - grow, e, base};
    insert_region(f, r);
    return true;
}

bool capture_fold_map(CaptureFold *f, uint64_t start, uint64_t len, uint64_t grow_below,
                      GError **err)
{
    uint64_t s = page_down(start), e = page_up(start + len);
    if (e <= s)
        return true;
    grow_below = page_up(grow_below);
    /* walk the regions overlapping [s, e) and map the gaps between them */
    uint64_t at = s;
    bool whole = true;
    for (guint i = first_above(f, s); i < f->regions->len && reg(f, i)->os < e; i++) {
        Region *r = reg(f, i);
        if (r->os > at) {
            uint64_t gap_end = r->os;
            if (!map_gap(f, at, gap_end, whole ? grow_below : 0, err))
                return false;
            i++; /* the region just inserted precedes r */
        }
        whole = false;
        at = MAX(at, reg(f, i)->oe);
    }
    if (at < e && !map_gap(f, at, e, whole ? grow_below : 0, err))
        return false;
    return true;
}

void capture_fold_unmap(CaptureFold *f, uint64_t start, uint64_t len)
{
    uint64_t s = page_down(start), e = page_up(start + len);
    guint i = first_above(f, s);
    while (i < f->regions->len && reg(f, i)->os < e) {
        Region r = *reg(f, i);
        uint64_t cs = MAX(s, r.os), ce = MIN(e, r.oe);
        free_span(f, r.fs + (cs - r.os), r.fs + (ce - r.os));
        g_array_remove_index(f->regions, i);
        if (r.os < cs) {
            Region left = {r.os, cs, r.fs};
            g_array_insert_val(f->regions, i, left);
            i++;
        }
        if (ce < r.oe) {
            Region right = {ce, r.oe, r.fs + (ce - r.os)};
            g_array_insert_val(f->regions, i, right);
            i++;
        }
    }
    f->last = 0;
}

bool capture_fold_addr(CaptureFold *f, uint64_t addr, uint64_t *out)
{
    if (f->last < f->regions->len) {
        Region *r = reg(f, f->last);
        if (addr >= r->os && addr < r->oe) {
            *out = r->fs + (addr - r->os);
            return true;
        }
    }
    guint i = first_above(f, addr);
    if (i < f->regions->len && reg(f, i)->os <= addr) {
        f->last = i;
        *out = reg(f, i)->fs + (addr - reg(f, i)->os);
        return true;
    }
    return false;
}

unsigned capture_fold_pieces(CaptureFold *f, uint64_t start, uint64_t len, CaptureFoldPiece *out,
                             unsigned max)
{
    uint64_t s = page_down(start), e = page_up(start + len);
    unsigned n = 0;
    for (guint i = first_above(f, s); i < f->regions->len && reg(f, i)->os < e && n < max; i++) {
        Region *r = reg(f, i);
        uint64_t cs = MAX(s, r->os), ce = MIN(e, r->oe);
        out[n].orig = cs;
        out[n].folded = r->fs + (cs - r->os);
        out[n].len = ce - cs;
        /* adjacent in both spaces: one piece */
        if (n > 0 && out[n - 1].orig + out[n - 1].len == cs &&
            out[n - 1].folded + out[n - 1].len == out[n].folded)
            out[n - 1].len += out[n].len;
        else
            n++;
    }
    return n;
}

uint64_t capture_fold_used(const CaptureFold *f)
{
    uint64_t used = 0;
    for (guint i = 0; i < f->regions->len; i++) {
        const Region *r = &g_array_index(f->regions, Region, i);
        used += r->oe - r->os;
    }
    return used;
}
