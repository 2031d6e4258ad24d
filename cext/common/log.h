/* Logging shared by cricket's native libraries: one line per message on stderr, level from
 * CRICKET_LOG (the names of Python's logging), so the shims speak like the Python side. Never
 * allocates: usable before main and after Python finalised. Each library compiles its own copy
 * (hidden visibility) and wraps it with its own prefix. */
#ifndef CRICKET_COMMON_LOG_H
#define CRICKET_COMMON_LOG_H

#include <stdarg.h>

/* Python's logging levels. */
enum { CRICKET_LOG_DEBUG = 10, CRICKET_LOG_INFO = 20, CRICKET_LOG_WARNING = 30, CRICKET_LOG_ERROR = 40 };

/* The lowest level written: CRICKET_LOG read once (WARNING when unset or unknown). */
int cricket_log_threshold(void);

/* Writes "[cricket] LEVEL WHO: message\n" in one write, when level reaches the threshold. */
void cricket_vlog(int level, const char *who, const char *fmt, va_list ap);

#endif
