/* The geometry of one cache level, as a preset declares it (presets/NAME.ini,
 * groups [l1d], [l2], [l3]) and cache_new() builds it. Its own small header
 * so that the preset (src/preset), which describes the whole machine, can
 * hold it without depending on the cache model's code. */
#ifndef VMSPLIT_MMU_CACHE_GEOM_H
#define VMSPLIT_MMU_CACHE_GEOM_H

typedef struct {
    unsigned size;               /* bytes; 0: the level does not exist */
    unsigned ways;
    unsigned line;               /* bytes */
    unsigned latency;            /* load-to-use cycles on a hit at this level */
} CacheGeom;

#endif
