// The prefetch hint is a static inline function of the header; this file gives the target a source.
#include "CPrefetch.h"
