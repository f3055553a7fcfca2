// The target's one source file: everything is in include/CEpoll.h.
#include "CEpoll.h"
