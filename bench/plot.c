/* SPDX-License-Identifier: BSD-3-Clause */
/* plot_png: line plots rendered into an RGB raster with a 5x7 bitmap font and
 * written as a PNG, deflated with zlib when the build has it (stored, i.e.
 * uncompressed, deflate blocks otherwise), so the benchmarks need no plotting
 * library on the GPU machine. */
#include "plot.h"
#ifdef BSR_HAVE_ZLIB
#include <zlib.h>
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 800, H = 520, L = 90, R = 210, T = 40, B = 60 }; /* canvas and plot margins */

typedef struct { uint8_t *px; } canvas;

/* Set pixel (x,y) of the canvas to rgb (clipped). */
static void put(canvas *c, int x, int y, const uint8_t rgb[3])
{
    if (x < 0 || y < 0 || x >= W || y >= H) return;
    memcpy(c->px + 3 * ((size_t)y * W + x), rgb, 3);
}

/* Bresenham line, thickness 2 */
static void line(canvas *c, int x0, int y0, int x1, int y1, const uint8_t rgb[3])
{
    int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, e = dx + dy;
    for (;;) {
        put(c, x0, y0, rgb); put(c, x0 + 1, y0, rgb); put(c, x0, y0 + 1, rgb);
        if (x0 == x1 && y0 == y1) break;
        int e2 = 2 * e;
        if (e2 >= dy) { e += dy; x0 += sx; }
        if (e2 <= dx) { e += dx; y0 += sy; }
    }
}

/* 5x7 glyphs, one byte per row (low 5 bits), for the characters labels use;
 * lowercase letters are drawn as capitals. */
static const char glyph_chars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.-+()/:=_,%^*";
static const uint8_t glyphs[][7] = {
    {14,17,19,21,25,17,14},{4,12,4,4,4,4,14},{14,17,1,2,4,8,31},{31,2,4,2,1,17,14},
    {2,6,10,18,31,2,2},{31,16,30,1,1,17,14},{6,8,16,30,17,17,14},{31,1,2,4,8,8,8},
    {14,17,17,14,17,17,14},{14,17,17,15,1,2,12},
    {14,17,17,31,17,17,17},{30,17,17,30,17,17,30},{14,17,16,16,16,17,14},{28,18,17,17,17,18,28},
    {31,16,16,30,16,16,31},{31,16,16,30,16,16,16},{14,17,16,23,17,17,15},{17,17,17,31,17,17,17},
    {14,4,4,4,4,4,14},{7,2,2,2,2,18,12},{17,18,20,24,20,18,17},{16,16,16,16,16,16,31},
    {17,27,21,21,17,17,17},{17,17,25,21,19,17,17},{14,17,17,17,17,17,14},{30,17,17,30,16,16,16},
    {14,17,17,17,21,18,13},{30,17,17,30,20,18,17},{15,16,16,14,1,1,30},{31,4,4,4,4,4,4},
    {17,17,17,17,17,17,14},{17,17,17,17,17,10,4},{17,17,17,21,21,21,10},{17,17,10,4,10,17,17},
    {17,17,17,10,4,4,4},{31,1,2,4,8,16,31},
    {0,0,0,0,0,12,12},{0,0,0,31,0,0,0},{0,4,4,31,4,4,0},{2,4,8,8,8,4,2},{8,4,2,2,2,4,8},
    {0,1,2,4,8,16,0},{0,12,12,0,12,12,0},{0,0,31,0,31,0,0},{0,0,0,0,0,0,31},{0,0,0,0,12,4,8},
    {24,25,2,4,8,19,3},{4,10,17,0,0,0,0},{0,21,14,31,14,21,0}};

/* Draw text with its top-left at (x,y), scale 2 (vertical: rotated 90 degrees). */
static void text(canvas *c, int x, int y, const char *s, const uint8_t rgb[3], int vertical)
{
    for (int i = 0; s[i]; i++) {
        char ch = s[i] >= 'a' && s[i] <= 'z' ? (char)(s[i] - 32) : s[i];
        const char *g = ch == ' ' ? NULL : strchr(glyph_chars, ch);
        if (g)
            for (int r = 0; r < 7; r++)
                for (int q = 0; q < 5; q++)
                    if (glyphs[g - glyph_chars][r] >> (4 - q) & 1)
                        for (int a = 0; a < 2; a++)
                            for (int b = 0; b < 2; b++) {
                                int px = 2 * q + a, py = 2 * r + b;
                                if (vertical) put(c, x + py, y - 12 * i - px, rgb);
                                else put(c, x + 12 * i + px, y + py, rgb);
                            }
    }
}

static uint32_t crc_table[256];
/* CRC-32 of p[0..n) continued from c (PNG chunks). */
static uint32_t crc(uint32_t c, const uint8_t *p, size_t n)
{
    if (!crc_table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t v = i;
            for (int k = 0; k < 8; k++) v = v & 1 ? 0xedb88320u ^ (v >> 1) : v >> 1;
            crc_table[i] = v;
        }
    c = ~c;
    while (n--) c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
    return ~c;
}

/* Store v big-endian at p. */
static void be32(uint8_t *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }

/* Write one PNG chunk (length, type, data, CRC). */
static void chunk(FILE *f, const char *type, const uint8_t *data, uint32_t n)
{
    uint8_t h[8];
    be32(h, n); memcpy(h + 4, type, 4);
    fwrite(h, 1, 8, f);
    if (n) fwrite(data, 1, n, f);
    uint32_t c = crc(crc(0, (const uint8_t *)type, 4), data, n);
    be32(h, c);
    fwrite(h, 1, 4, f);
}

/* raw[0..raw_n) as a zlib stream of stored (uncompressed) deflate blocks in
 * z (room for raw_n + 5 per 64 KiB block + 6); returns its length. */
static size_t zlib_stored(const uint8_t *raw, size_t raw_n, uint8_t *z)
{
    size_t o = 0;
    z[o++] = 0x78; z[o++] = 0x01;
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < raw_n; i++) { a = (a + raw[i]) % 65521; b = (b + a) % 65521; }
    for (size_t p = 0; p < raw_n; p += 65535) {
        uint16_t n = (uint16_t)(raw_n - p < 65535 ? raw_n - p : 65535);
        z[o++] = p + n >= raw_n; z[o++] = n & 0xff; z[o++] = n >> 8;
        z[o++] = ~n & 0xff; z[o++] = (uint16_t)~n >> 8;
        memcpy(z + o, raw + p, n); o += n;
    }
    be32(z + o, (b << 16) | a); o += 4;
    return o;
}

/* Encode the canvas as PNG: filter byte 0 per row, the rows as one zlib
 * stream (deflated; stored blocks without zlib or when deflate fails). */
static int write_png(const char *path, const canvas *c)
{
    size_t raw_n = (size_t)H * (1 + 3 * W), nblk = (raw_n + 65534) / 65535, cap = raw_n + 5 * nblk + 6;
#ifdef BSR_HAVE_ZLIB
    if (compressBound((uLong)raw_n) > cap) cap = compressBound((uLong)raw_n);
#endif
    uint8_t *raw = malloc(raw_n), *z = malloc(cap);
    if (!raw || !z) { free(raw); free(z); return -1; }
    for (int y = 0; y < H; y++) {
        raw[(size_t)y * (1 + 3 * W)] = 0;
        memcpy(raw + (size_t)y * (1 + 3 * W) + 1, c->px + (size_t)y * 3 * W, 3 * W);
    }
    size_t o = 0;
#ifdef BSR_HAVE_ZLIB
    uLongf zn = (uLongf)cap;
    if (compress2(z, &zn, raw, (uLong)raw_n, 9) == Z_OK) o = zn;
#endif
    if (!o) o = zlib_stored(raw, raw_n, z);
    FILE *f = fopen(path, "wb");
    if (!f) { free(raw); free(z); return -1; }
    static const uint8_t sig[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    uint8_t ihdr[13] = {0};
    be32(ihdr, W); be32(ihdr + 4, H); ihdr[8] = 8; ihdr[9] = 2;
    fwrite(sig, 1, 8, f);
    chunk(f, "IHDR", ihdr, 13);
    chunk(f, "IDAT", z, (uint32_t)o);
    chunk(f, "IEND", NULL, 0);
    int bad = ferror(f);
    bad |= fclose(f);
    free(raw); free(z);
    return bad ? -1 : 0;
}

/* 1 when (x,y) can be drawn (finite, positive on log axes). */
static int usable(double x, double y, int logx, int logy)
{
    return isfinite(x) && isfinite(y) && (!logx || x > 0) && (!logy || y > 0);
}

/* Tick label: powers of ten on log axes, %g otherwise. */
static void tick_label(char *buf, size_t n, double v, int islog)
{
    if (islog) snprintf(buf, n, "1E%d", (int)lround(v));
    else snprintf(buf, n, "%.3g", v);
}

/* The n-th (n >= 0) step of the 1, 2, 5 x 10^k sequence from 10^k0, as
 * exact as decimals go (10^-k divided, not multiplied by 0.1^k). */
static double nice_step(int k0, int n)
{
    static const double m[3] = {1, 2, 5};
    int k = k0 + n / 3;
    return k >= 0 ? m[n % 3] * pow(10, k) : m[n % 3] / pow(10, -k);
}

/* The multiples of step from *lo down to *hi up into t, [*lo, *hi] widened to
 * the first and last: their count, or maxt + 1 (t, lo, hi untouched) when
 * more than maxt would be needed. */
static int ticks_at(double *lo, double *hi, double step, int maxt, double *t)
{
    /* a hair of slack: 0.30000000000000004 / 0.1 is a multiple */
    double i0 = floor(*lo / step + 1e-9), i1 = ceil(*hi / step - 1e-9);
    if (!(i1 - i0 + 1 <= maxt)) return maxt + 1;
    int n = (int)(i1 - i0) + 1;
    for (int j = 0; j < n; j++) t[j] = (i0 + j) * step;
    *lo = t[0];
    *hi = t[n - 1];
    return n;
}

int plot_ticks_linear(double *lo, double *hi, int maxt, int integer, double *t)
{
    /* an empty (or, for its magnitude, vanishing) range: a little around it */
    double mag = fmax(fabs(*lo), fabs(*hi));
    if (!(*hi - *lo > 1e-9 * mag)) {
        double w = mag > 0 ? 1e-3 * mag : 0.5;
        *lo -= w;
        *hi += w;
    }
    double raw = (*hi - *lo) / (maxt - 1);
    int k0 = (int)floor(log10(raw)) - 1, n = 0;
    for (int q = 0;; q++) {
        double step = nice_step(k0, q), l = *lo, h = *hi;
        if (integer && step < 1) continue;
        if ((n = ticks_at(&l, &h, step, maxt, t)) <= maxt) { *lo = l; *hi = h; return n; }
    }
}

int plot_ticks_log(double *lo, double *hi, int maxt, double *t)
{
    *lo = floor(*lo);
    *hi = ceil(*hi);
    if (*hi <= *lo) *hi = *lo + 1;
    for (int q = 0;; q++) {
        double step = nice_step(0, q), l = *lo, h = *hi;
        int n = ticks_at(&l, &h, step, maxt, t);
        if (n <= maxt) { *lo = l; *hi = h; return n; }
    }
}

/* Write a line plot of the series as a PNG at path. */
int plot_png(const char *path, const char *title, const char *xlabel, const char *ylabel,
             const plot_series *s, int ns, int logx, int logy)
{
    static const uint8_t black[3] = {0, 0, 0}, grey[3] = {215, 215, 215}, pal[8][3] = {
        {31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40},
        {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {23, 190, 207}};
    canvas c = {malloc((size_t)W * H * 3)};
    if (!c.px) return -1;
    memset(c.px, 255, (size_t)W * H * 3);
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    int xint = 1, yint = 1;   /* every value an integer (iterations): integer ticks */
    for (int k = 0; k < ns; k++)
        for (int i = 0; i < s[k].n; i++) {
            if (!usable(s[k].x[i], s[k].y[i], logx, logy)) continue;
            double x = logx ? log10(s[k].x[i]) : s[k].x[i], y = logy ? log10(s[k].y[i]) : s[k].y[i];
            x0 = fmin(x0, x); x1 = fmax(x1, x); y0 = fmin(y0, y); y1 = fmax(y1, y);
            xint &= x == floor(x);
            yint &= y == floor(y);
        }
    if (x0 > x1) { x0 = 0; x1 = 1; y0 = 0; y1 = 1; }
    if (!logy && y0 > 0 && y0 < 0.5 * y1) y0 = 0;
    /* ticks at round values: steps of 1, 2, 5 x 10^k (integers on an integer
     * axis), every decade of a log axis (a regular stride when too many);
     * the axes end at ticks.  At most 6 labels across (up to 7 characters
     * each), 8 on a log axis (1E-10: 5), 16 up (28 pixels apart). */
    enum { TMAX = 16 };
    double xt[TMAX], yt[TMAX];
    int nxt = logx ? plot_ticks_log(&x0, &x1, 8, xt) : plot_ticks_linear(&x0, &x1, 6, xint, xt);
    int nyt = logy ? plot_ticks_log(&y0, &y1, TMAX, yt) : plot_ticks_linear(&y0, &y1, TMAX, yint, yt);
    int pw = W - L - R, ph = H - T - B;
#define PX(v) (L + (int)lround(((v) - x0) / (x1 - x0) * pw))
#define PY(v) (T + ph - (int)lround(((v) - y0) / (y1 - y0) * ph))
    char buf[64];
    for (int t = 0; t < nxt; t++) { /* grid and ticks */
        line(&c, PX(xt[t]), T, PX(xt[t]), T + ph, grey);
        tick_label(buf, sizeof buf, xt[t], logx);
        text(&c, PX(xt[t]) - 6 * (int)strlen(buf), T + ph + 8, buf, black, 0);
    }
    for (int t = 0; t < nyt; t++) {
        line(&c, L, PY(yt[t]), L + pw, PY(yt[t]), grey);
        tick_label(buf, sizeof buf, yt[t], logy);
        text(&c, L - 8 - 12 * (int)strlen(buf), PY(yt[t]) - 7, buf, black, 0);
    }
    line(&c, L, T + ph, L + pw, T + ph, black);
    line(&c, L, T, L, T + ph, black);
    if (title) text(&c, L, 10, title, black, 0);
    if (xlabel) text(&c, L + pw / 2 - 6 * (int)strlen(xlabel), H - 24, xlabel, black, 0);
    if (ylabel) text(&c, 6, T + ph / 2 + 6 * (int)strlen(ylabel), ylabel, black, 1);
    for (int k = 0; k < ns; k++) {
        const uint8_t *col = pal[k % 8];
        int px = -1, py = -1;
        for (int i = 0; i < s[k].n; i++) {
            if (!usable(s[k].x[i], s[k].y[i], logx, logy)) continue;
            int X = PX(logx ? log10(s[k].x[i]) : s[k].x[i]), Y = PY(logy ? log10(s[k].y[i]) : s[k].y[i]);
            if (px >= 0) line(&c, px, py, X, Y, col);
            for (int a = -3; a <= 3; a++)
                for (int b = -3; b <= 3; b++) put(&c, X + a, Y + b, col);
            px = X; py = Y;
        }
        int ly = T + 10 + 22 * k; /* legend */
        for (int a = 0; a < 16; a++)
            for (int b = -2; b <= 2; b++) put(&c, W - R + 14 + a, ly + 6 + b, col);
        snprintf(buf, sizeof buf, "%.15s", s[k].name ? s[k].name : "");
        text(&c, W - R + 36, ly, buf, black, 0);
    }
#undef PX
#undef PY
    int rc = write_png(path, &c);
    if (rc) fprintf(stderr, "bsrsolve: cannot write plot %s\n", path);
    free(c.px);
    return rc;
}
