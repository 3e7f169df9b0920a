// Header-only: see include/CHeapBytes.h.
#include "CHeapBytes.h"
