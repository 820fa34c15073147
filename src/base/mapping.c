#include "base/mapping.h"

#include <sys/stat.h>

bool hfx_mapping_intact(const hfx_mapping *m) {
    struct stat sb;
    return m->fd < 0 || (fstat(m->fd, &sb) == 0 && (uint64_t)sb.st_size >= m->size);
}
