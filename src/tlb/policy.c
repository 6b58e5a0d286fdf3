/* The registry of TLB replacement policies (policies.def). */
#include "tlb/policy.h"

#include "tlb/tlb.h"             /* TLB_ERROR */

#define TLB_POLICY(n) extern const TlbPolicy tlb_policy_##n;
#include "tlb/policies.def"
#undef TLB_POLICY

static const TlbPolicy *const registry[] = {
#define TLB_POLICY(n) &tlb_policy_##n,
#include "tlb/policies.def"
#undef TLB_POLICY
};

const TlbPolicy *const *tlb_policy_all(size_t *n)
{
    *n = G_N_ELEMENTS(registry);
    return registry;
}

const TlbPolicy *tlb_policy_find(const char *name, GError **err)
{
    GString *known = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(registry); i++) {
        if (name && g_ascii_strcasecmp(name, registry[i]->name) == 0) {
            g_string_free(known, TRUE);
            return registry[i];
        }
        g_string_append_printf(known, "%s%s", i ? ", " : "", registry[i]->name);
    }
    g_set_error(err, TLB_ERROR, TLB_ERROR_POLICY,
                "unknown TLB replacement policy '%s' (expected one of: %s)",
                name ? name : "(none)", known->str);
    g_string_free(known, TRUE);
    return NULL;
}
