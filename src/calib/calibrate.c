/* Calibration: see calibrate.h for the method. */
#include "calib/calibrate.h"

#include "calib/experiment.h"
#include "kernel_model/profiles.h"

#include <math.h>
#include <string.h>

#define RIDGE 1e-6
#define MAX_STEPS 12
#define TINY 1e-9

typedef struct {
    const CalibConfig *cfg;
    ProfileTable *t;
    Preset *p;                   /* the working copy */
    GPtrArray *rows;             /* const Measurement*: fit rows for this CPU */
    CalibParam *par;
    unsigned n, m;
    unsigned runs;
} Fit;

static double figure_of(const Measurement *m) { return (m->lo + m->hi) / 2; }

static void set_all(Fit *f, const unsigned *v)
{
    for (unsigned j = 0; j < f->n; j++)
        preset_set_uint(f->p, f->par[j].id, v[j]);
}

/* The model's value of every fit row at v. */
static bool eval(Fit *f, const unsigned *v, double *out, GError **err)
{
    set_all(f, v);
    for (unsigned i = 0; i < f->m; i++) {
        f->runs++;
        if (!calib_measure(f->p, f->t, g_ptr_array_index(f->rows, i), &out[i], err))
            return false;
    }
    return true;
}

/* d model_i / d value_j (model units per cycle), by a finite difference
 * inside the range; jac is m x n, row-major. */
static bool jacobian(Fit *f, const unsigned *v, const double *base, double *jac, GError **err)
{
    unsigned *w = g_memdup2(v, sizeof *v * f->n);
    double *y = g_new(double, f->m);
    bool ok = true;
    for (unsigned j = 0; ok && j < f->n; j++) {
        unsigned span = f->par[j].hi - f->par[j].lo;
        unsigned h = MAX(1u, span / 16);
        int dir = v[j] + h <= f->par[j].hi ? 1 : -1;
        if (dir < 0 && v[j] < f->par[j].lo + h)
            h = v[j] - f->par[j].lo;
        if (!h) {                /* a range of one value: nothing to vary */
            for (unsigned i = 0; i < f->m; i++)
                jac[i * f->n + j] = 0;
            continue;
        }
        w[j] = dir > 0 ? v[j] + h : v[j] - h;
        ok = eval(f, w, y, err);
        w[j] = v[j];
        for (unsigned i = 0; ok && i < f->m; i++)
            jac[i * f->n + j] = (y[i] - base[i]) / (dir * (double)h);
    }
    g_free(y);
    g_free(w);
    return ok;
}

/* Solve a x = b (k x k, row-major) by Gaussian elimination with partial
 * pivoting; a is positive definite here (the ridge), so it never fails. */
static void solve(double *a, double *b, unsigned k)
{
    for (unsigned c = 0; c < k; c++) {
        unsigned piv = c;
        for (unsigned r = c + 1; r < k; r++)
            if (fabs(a[r * k + c]) > fabs(a[piv * k + c]))
                piv = r;
        for (unsigned j = 0; j < k; j++) {
            double t = a[c * k + j];
            a[c * k + j] = a[piv * k + j];
            a[piv * k + j] = t;
        }
        double t = b[c];
        b[c] = b[piv];
        b[piv] = t;
        for (unsigned r = c + 1; r < k; r++) {
            double q = a[r * k + c] / a[c * k + c];
            for (unsigned j = c; j < k; j++)
                a[r * k + j] -= q * a[c * k + j];
            b[r] -= q * b[c];
        }
    }
    for (unsigned c = k; c-- > 0;) {
        for (unsigned j = c + 1; j < k; j++)
            b[c] -= a[c * k + j] * b[j];
        b[c] /= a[c * k + c];
    }
}

/* One bounded Gauss-Newton step in scaled coordinates: from the model
 * values y at v, the new values (rounded, inside the ranges) in next. */
static void step(const Fit *f, const unsigned *v, const double *y, const double *jac,
                 unsigned *next)
{
    unsigned n = f->n, m = f->m;
    double *x = g_new(double, n), *xt = g_new(double, n), *w = g_new(double, n);
    double *r = g_new(double, m), *js = g_new(double, m * n);
    bool *held = g_new0(bool, n);
    for (unsigned j = 0; j < n; j++) {
        w[j] = MAX(1.0, (double)f->par[j].hi - f->par[j].lo);
        x[j] = ((double)v[j] - f->par[j].prior) / w[j];
        xt[j] = x[j];
    }
    for (unsigned i = 0; i < m; i++) {
        double fig = figure_of(g_ptr_array_index(f->rows, i));
        r[i] = (y[i] - fig) / fig;
        for (unsigned j = 0; j < n; j++)
            js[i * n + j] = jac[i * n + j] * w[j] / fig;
    }
    for (bool again = true; again;) {
        again = false;
        unsigned k = 0, *idx = g_new(unsigned, n);
        for (unsigned j = 0; j < n; j++)
            if (!held[j])
                idx[k++] = j;
        /* Residual with the held parameters already moved to their bounds. */
        double *rc = g_memdup2(r, sizeof *r * m);
        for (unsigned i = 0; i < m; i++)
            for (unsigned j = 0; j < n; j++)
                if (held[j])
                    rc[i] += js[i * n + j] * (xt[j] - x[j]);
        double *a = g_new0(double, (size_t)k * k), *b = g_new0(double, k);
        for (unsigned p = 0; p < k; p++) {
            for (unsigned q = 0; q < k; q++) {
                double s = p == q ? RIDGE : 0;
                for (unsigned i = 0; i < m; i++)
                    s += js[i * n + idx[p]] * js[i * n + idx[q]];
                a[p * k + q] = s;
            }
            double s = RIDGE * x[idx[p]];
            for (unsigned i = 0; i < m; i++)
                s += js[i * n + idx[p]] * rc[i];
            b[p] = -s;
        }
        solve(a, b, k);
        for (unsigned p = 0; p < k; p++) {
            unsigned j = idx[p];
            double lo = ((double)f->par[j].lo - f->par[j].prior) / w[j];
            double hi = ((double)f->par[j].hi - f->par[j].prior) / w[j];
            xt[j] = x[j] + b[p];
            if (xt[j] < lo || xt[j] > hi) {
                xt[j] = xt[j] < lo ? lo : hi;
                held[j] = again = true;
            }
        }
        g_free(a);
        g_free(b);
        g_free(rc);
        g_free(idx);
    }
    for (unsigned j = 0; j < n; j++) {
        double val = round(f->par[j].prior + xt[j] * w[j]);
        next[j] = (unsigned)CLAMP(val, (double)f->par[j].lo, (double)f->par[j].hi);
    }
    g_free(x);
    g_free(xt);
    g_free(w);
    g_free(r);
    g_free(js);
    g_free(held);
}

/* ---- identifiability ---------------------------------------------------- */

static const char *short_id(const char *id)
{
    return g_str_has_prefix(id, "cost.") ? id + 5 : id;
}

static void coef_text(GString *s, double c, const char *name)
{
    bool first = s->len == 0;
    double a = fabs(c);
    if (!first)
        g_string_append(s, c < 0 ? " - " : " + ");
    else if (c < 0)
        g_string_append(s, "-");
    if (fabs(a - 1) > 1e-6)
        g_string_append_printf(s, "%.3g ", a);
    g_string_append(s, name);
}

/* Row echelon form of the fit rows' Jacobian, columns by influence; fills
 * the combinations and marks informed and separable parameters. */
static void identify(Fit *f, const double *jac, const unsigned *v, CalibResult *res)
{
    unsigned n = f->n, m = f->m;
    double *a = g_memdup2(jac, sizeof *jac * m * n);
    unsigned *order = g_new(unsigned, n);
    double *infl = g_new0(double, n), scale = 0;
    for (unsigned j = 0; j < n; j++) {
        for (unsigned i = 0; i < m; i++)
            infl[j] += fabs(jac[i * n + j]);
        infl[j] *= MAX(1.0, (double)f->par[j].hi - f->par[j].lo);
        scale = MAX(scale, infl[j]);
        order[j] = j;
    }
    /* Insertion sort, most influential first; ties in file order. */
    for (unsigned j = 1; j < n; j++)
        for (unsigned k = j; k > 0 && infl[order[k]] > infl[order[k - 1]]; k--) {
            unsigned t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    for (unsigned j = 0; j < n; j++) {
        f->par[j].informed = infl[j] > TINY * MAX(scale, 1.0);
    }
    res->combos = g_new0(CalibCombo, m);
    unsigned row = 0;
    for (unsigned c = 0; c < n && row < m; c++) {
        unsigned col = order[c], piv = row;
        for (unsigned i = row; i < m; i++)
            if (fabs(a[i * n + col]) > fabs(a[piv * n + col]))
                piv = i;
        double colmax = 0;
        for (unsigned i = 0; i < m; i++)
            colmax = MAX(colmax, fabs(jac[i * n + col]));
        if (colmax == 0 || fabs(a[piv * n + col]) <= 1e-6 * colmax)
            continue;
        for (unsigned j = 0; j < n; j++) {
            double t = a[row * n + j];
            a[row * n + j] = a[piv * n + j];
            a[piv * n + j] = t;
        }
        double d = a[row * n + col];
        for (unsigned j = 0; j < n; j++)
            a[row * n + j] /= d;
        for (unsigned i = 0; i < m; i++) {
            if (i == row)
                continue;
            double q = a[i * n + col];
            for (unsigned j = 0; j < n; j++)
                a[i * n + j] -= q * a[row * n + j];
        }
        row++;
    }
    for (unsigned i = 0; i < row; i++) {
        GString *s = g_string_new(NULL);
        double val = 0;
        unsigned terms = 0, last = 0;
        for (unsigned c = 0; c < n; c++) {
            unsigned j = order[c];
            double co = a[i * n + j];
            if (fabs(co) < 1e-6)
                continue;
            coef_text(s, co, short_id(f->par[j].id));
            f->par[j].combos |= 1u << i;
            val += co * v[j];
            terms++;
            last = j;
        }
        CalibCombo *cb = &res->combos[res->ncombos++];
        cb->single = terms == 1;
        cb->value = val;
        cb->text = g_string_free(s, FALSE);
        if (cb->single)
            f->par[last].separable = true;
    }
    g_free(a);
    g_free(order);
    g_free(infl);
}

/* ---- the fit ------------------------------------------------------------ */

static bool wanted(const CalibConfig *cfg, const char *id)
{
    if (!cfg->only)
        return true;
    for (const char *const *o = cfg->only; *o; o++)
        if (!strcmp(*o, id))
            return true;
    return false;
}

static bool setup(Fit *f, GError **err)
{
    const Preset *p = f->cfg->preset;
    f->rows = g_ptr_array_new();
    for (guint i = 0; i < f->cfg->set->rows->len; i++) {
        const Measurement *m = g_ptr_array_index(f->cfg->set->rows, i);
        if (m->role == MEAS_ROLE_FIT && !strcmp(m->cpu, p->name))
            g_ptr_array_add(f->rows, (gpointer)m);
    }
    f->m = f->rows->len;
    if (f->m > CALIB_MAX_ROWS) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_INVALID, "%s: %u fit rows for %s; expected at "
                    "most %d", f->cfg->set->path, f->m, p->name, CALIB_MAX_ROWS);
        return false;
    }
    f->par = g_new0(CalibParam, p->nranges);
    for (unsigned i = 0; i < p->nranges; i++) {
        const PresetRange *r = &p->ranges[i];
        if (r->kind != PRESET_RANGE_SPAN || !wanted(f->cfg, r->id))
            continue;
        CalibParam *c = &f->par[f->n++];
        c->id = g_strdup(r->id);
        c->lo = r->lo;
        c->hi = r->hi;
        preset_get_uint(p, r->id, &c->start);
        c->prior = r->has_prior ? r->prior : c->start;
        if (f->cfg->start)
            c->start = CLAMP(f->cfg->start[f->n - 1], c->lo, c->hi);
        if (f->cfg->prior)
            c->prior = CLAMP(f->cfg->prior[f->n - 1], c->lo, c->hi);
    }
    if (!f->m || !f->n) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_INVALID,
                    "%s: %s; expected fit rows with cpu = %s in %s and estimates with "
                    "'range LO..HI' in the preset", p->path ? p->path : p->name,
                    !f->m ? "no fit measurements for this CPU" : "no ranged parameter to fit",
                    p->name, f->cfg->set->path);
        return false;
    }
    return (f->t = profiles_load(f->cfg->profiles, err)) != NULL;
}

CalibResult *calib_fit(const CalibConfig *cfg, GError **err)
{
    Fit f = { .cfg = cfg, .p = preset_copy(cfg->preset) };
    CalibResult *res = g_new0(CalibResult, 1);
    bool ok = setup(&f, err);
    unsigned *v = g_new0(unsigned, f.n + 1), *next = g_new0(unsigned, f.n + 1);
    double *y = g_new0(double, f.m + 1), *jac = g_new0(double, (size_t)f.m * f.n + 1);
    res->targets = g_new0(CalibTarget, f.m + 1);
    for (unsigned j = 0; j < f.n; j++)
        v[j] = f.par[j].start;
    ok = ok && eval(&f, v, y, err);
    for (unsigned i = 0; ok && i < f.m; i++)
        res->targets[i] = (CalibTarget){ .row = g_ptr_array_index(f.rows, i), .start = y[i] };
    while (ok && res->steps < MAX_STEPS) {
        ok = jacobian(&f, v, y, jac, err);
        if (!ok)
            break;
        step(&f, v, y, jac, next);
        res->steps++;
        if (!memcmp(next, v, sizeof *v * f.n))
            break;
        memcpy(v, next, sizeof *v * f.n);
        ok = eval(&f, v, y, err);
    }
    for (unsigned j = 0; ok && j < f.n; j++)
        for (unsigned i = 0; i < f.m; i++)
            if (fabs(jac[i * f.n + j]) > TINY)
                f.par[j].rows |= 1u << i;
    if (ok) {
        identify(&f, jac, v, res);
        set_all(&f, v);
        for (unsigned j = 0; j < f.n; j++)
            f.par[j].value = v[j];
        for (unsigned i = 0; i < f.m; i++) {
            res->targets[i].model = y[i];
            res->targets[i].error = meas_error(res->targets[i].row, y[i]);
        }
        res->ntargets = f.m;
    }
    res->fitted = f.p;
    res->params = f.par;
    res->nparams = f.n;
    res->runs = f.runs;
    g_free(v);
    g_free(next);
    g_free(y);
    g_free(jac);
    profiles_free(f.t);
    if (f.rows)
        g_ptr_array_free(f.rows, TRUE);
    if (!ok) {
        calib_result_free(res);
        return NULL;
    }
    return res;
}

void calib_result_free(CalibResult *r)
{
    if (!r)
        return;
    preset_free(r->fitted);
    for (unsigned j = 0; j < r->nparams; j++)
        g_free(r->params[j].id);
    g_free(r->params);
    for (unsigned i = 0; i < r->ncombos; i++)
        g_free(r->combos[i].text);
    g_free(r->combos);
    g_free(r->targets);
    g_free(r);
}
