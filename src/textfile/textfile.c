/* See textfile.h. */
#include "textfile/textfile.h"

#include <string.h>

guint textfile_nul_line(const char *text, gsize len)
{
    const char *nul = memchr(text, '\0', len);
    if (!nul)
        return 0;
    guint line = 1;
    for (const char *p = text; p < nul; p++)
        line += *p == '\n';
    return line;
}

bool textfile_check(const char *text, gsize len, const char *name, GQuark domain, gint code,
                    GError **err)
{
    guint line = textfile_nul_line(text, len);
    if (!line)
        return true;
    g_set_error(err, domain, code, "%s:%u: a NUL byte (expected a text file)", name, line);
    return false;
}
