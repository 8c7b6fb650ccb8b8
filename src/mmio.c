/* Matrix Market I/O (placeholder until the parser lands). */
#include "internal.h"

bsr_status bsr_mm_read_csr(const char *path, bsr_csr *C) { (void)C; return bsr_error(BSR_ERR_UNSUPPORTED, "%s: Matrix Market reader not built yet", path); }
bsr_status bsr_mm_read(const char *path, int b, bsr_precision prec, bsr_matrix **A, bsr_convert_info *info)
{
    bsr_csr C;
    BSR_TRY(bsr_mm_read_csr(path, &C));
    bsr_status s = bsr_from_csr(&C, b, 0, prec, A, info);
    bsr_csr_free(&C);
    return s;
}
bsr_status bsr_mm_read_dense(const char *path, int *nrows, int *ncols, double **val) { (void)nrows; (void)ncols; (void)val; return bsr_error(BSR_ERR_UNSUPPORTED, "%s: not built yet", path); }
bsr_status bsr_mm_write_csr(const char *path, const bsr_csr *C) { (void)C; return bsr_error(BSR_ERR_UNSUPPORTED, "%s: not built yet", path); }
bsr_status bsr_mm_write(const char *path, const bsr_matrix *A) { (void)A; return bsr_error(BSR_ERR_UNSUPPORTED, "%s: not built yet", path); }
bsr_status bsr_mm_write_dense(const char *path, int nrows, int ncols, const double *val) { (void)nrows; (void)ncols; (void)val; return bsr_error(BSR_ERR_UNSUPPORTED, "%s: not built yet", path); }
