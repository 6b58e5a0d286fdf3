/* Text inputs read whole (the INI readers: presets, syscall and fault
 * profiles, measurements; the physical memory map): the one check they
 * share before parsing, that the bytes hold no NUL.
 *
 * Why: those readers parse C strings, and GKeyFile ends a line at a NUL,
 * so a NUL byte (a damaged file, a binary one given by mistake) silently
 * cut the text or a line there: the memory map lost every range after it,
 * a preset key its value's last digits (found fuzzing, issue 19). The
 * line-based readers (traces, strace logs, Lackey, images) check each line
 * themselves.
 *
 * The lowest layer (tests/check_private_includes.py): any module may use
 * it; it uses nothing of vmsplit's. */
#ifndef VMSPLIT_TEXTFILE_TEXTFILE_H
#define VMSPLIT_TEXTFILE_TEXTFILE_H

#include <glib.h>
#include <stdbool.h>

/* Line (1-based) of the first NUL byte in text[0..len), 0 if there is none. */
guint textfile_nul_line(const char *text, gsize len);

/* True if text[0..len) holds no NUL byte; else false with err set in the
 * caller's domain and code: "NAME:LINE: a NUL byte (expected a text file)". */
bool textfile_check(const char *text, gsize len, const char *name, GQuark domain, gint code,
                    GError **err);

#endif
