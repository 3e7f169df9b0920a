// The C target's one source file: everything lives in include/ripple_thread.h (inline).
#include "ripple_thread.h"
