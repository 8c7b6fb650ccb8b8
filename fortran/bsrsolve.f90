! SPDX-License-Identifier: BSD-3-Clause
! bsrsolve: Fortran interface (ISO_C_BINDING, Fortran 2003; assumed rank,
! Fortran 2018, for multivector values) to the block-CSR ILU/Krylov solvers of
! the C library.  Every function returns a status, BSR_OK (0) on
! success; bsr_status_message(status) says what failed.  Matrices are double
! precision; indices are 1-based unless base = 0 is passed.
!
!   type(bsr_matrix) :: A;  type(bsr_multivec) :: B, X
!   type(bsr_solver) :: s;  type(bsr_stats) :: st
!   ierr = bsr_matrix_from_csr(A, n, rowptr, colind, val)      ! b chosen, or b = 4
!   ierr = bsr_multivec_new(B, n, 1);  ierr = bsr_multivec_set(B, rhs)
!   ierr = bsr_multivec_new(X, n, 1)                           ! initial guess 0
!   ierr = bsr_solver_new(s, "method=bicgstab,precond=ilu2,rtol=1e-8")
!   ierr = bsr_solver_setup(s, A)
!   ierr = bsr_solver_solve(s, B, X, st);  ierr = bsr_multivec_get(X, x)
!   ... each time step: bsr_matrix_set_csr_values(A, ...); bsr_solver_refactor(s, A); solve
!   ierr = bsr_solver_set_tolerances(s, rtol, atol, maxit)    ! no new setup
!   ierr = bsr_solver_error_estimate(s, B, X, est, its)        ! est(k): ||e|| / ||x||, A e = B - A X
!   call bsr_solver_free(s); call bsr_multivec_free(B); ... call bsr_matrix_free(A)
!   call bsr_stats_free(st)
! An object passed as intent(out) to a *_new / *_from_* function is overwritten:
! free the one it held first.
module bsrsolve
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! Status codes (bsr_status in bsrsolve/core.h).
  integer, parameter, public :: BSR_OK = 0, BSR_ERR_ARG = 1, BSR_ERR_SIZE = 2, &
       BSR_ERR_PARSE = 3, BSR_ERR_IO = 4, BSR_ERR_NOMEM = 5, BSR_ERR_VALUE = 6, &
       BSR_ERR_STRUCTURE = 7, BSR_ERR_SINGULAR = 8, BSR_ERR_UNSUPPORTED = 9, &
       BSR_ERR_CUDA = 10, BSR_ERR_NODEVICE = 11, BSR_ERR_METIS = 12, &
       BSR_ERR_NOCONV = 13, BSR_ERR_BREAKDOWN = 14, BSR_ERR_INTERNAL = 15

  ! bsrf_size's what and bsrf_free's kind (bsrsolve_f.c)
  integer(c_int), parameter :: SZ_NBROWS = 0, SZ_BLOCK = 1, SZ_ROWS = 2, SZ_COLS = 3, SZ_STATS = 4
  integer(c_int), parameter :: K_CONTEXT = 0, K_MATRIX = 1, K_MULTIVEC = 2, K_SOLVER = 3, K_STATS = 4

  ! The library's objects: a handle to the C object each, one type per kind
  ! (so that the compiler checks which kind a call takes).
  type :: bsr_handle
     type(c_ptr) :: ptr = c_null_ptr
  end type bsr_handle
  type, public, extends(bsr_handle) :: bsr_context
  end type bsr_context
  type, public, extends(bsr_handle) :: bsr_matrix
  end type bsr_matrix
  type, public, extends(bsr_handle) :: bsr_multivec
  end type bsr_multivec
  type, public, extends(bsr_handle) :: bsr_solver
  end type bsr_solver
  ! What a solve reports, one entry per right-hand side.
  type, public :: bsr_stats
     integer :: k = 0
     integer, allocatable :: iterations(:), reason(:)
     real(c_double), allocatable :: relres(:), resnorm(:)
     real(c_double) :: setup_s = 0, solve_s = 0, fill = 0
     logical :: device = .false.
     character(len=:), allocatable :: precond_info
  end type bsr_stats

  public :: bsr_context_new, bsr_context_free
  public :: bsr_matrix_from_bsr, bsr_matrix_from_csr, bsr_matrix_set_bsr_values, &
       bsr_matrix_set_csr_values, bsr_matrix_rows, bsr_matrix_blocksize, bsr_matrix_free
  public :: bsr_multivec_new, bsr_multivec_set, bsr_multivec_get, bsr_multivec_free
  public :: bsr_solver_new, bsr_solver_setup, bsr_solver_refactor, bsr_solver_solve, &
       bsr_solver_free, bsr_stats_free, bsr_solver_set_tolerances, bsr_solver_error_estimate
  public :: bsr_status_name, bsr_error_message, bsr_status_message, bsr_reason_name


  interface
     function c_strlen(s) bind(c, name="strlen")
       import :: c_ptr, c_size_t
       type(c_ptr), value :: s
       integer(c_size_t) :: c_strlen
     end function c_strlen
     function c_context_create(ctx, backend, device, stream) bind(c, name="bsr_context_create")
       import :: c_ptr, c_int
       type(c_ptr) :: ctx
       integer(c_int), value :: backend, device
       type(c_ptr), value :: stream
       integer(c_int) :: c_context_create
     end function c_context_create
     function c_from_bsr(A, nbrows, nbcols, b, rowptr, colind, val, base, colmajor) &
          bind(c, name="bsrf_matrix_from_bsr")
       import :: c_ptr, c_int, c_double
       type(c_ptr) :: A
       integer(c_int), value :: nbrows, nbcols, b, base, colmajor
       integer(c_int), intent(in) :: rowptr(*), colind(*)
       real(c_double), intent(in) :: val(*)
       integer(c_int) :: c_from_bsr
     end function c_from_bsr
     function c_from_csr(A, n, rowptr, colind, val, base, b, b_used) &
          bind(c, name="bsrf_matrix_from_csr")
       import :: c_ptr, c_int, c_double
       type(c_ptr) :: A
       integer(c_int), value :: n, base, b
       integer(c_int), intent(in) :: rowptr(*), colind(*)
       real(c_double), intent(in) :: val(*)
       integer(c_int) :: b_used
       integer(c_int) :: c_from_csr
     end function c_from_csr
     function c_csr_values(A, n, rowptr, colind, val, base) bind(c, name="bsrf_matrix_csr_values")
       import :: c_ptr, c_int, c_double
       type(c_ptr), value :: A
       integer(c_int), value :: n, base
       integer(c_int), intent(in) :: rowptr(*), colind(*)
       real(c_double), intent(in) :: val(*)
       integer(c_int) :: c_csr_values
     end function c_csr_values
     function c_set_values(A, val, flags) bind(c, name="bsr_matrix_set_values")
       import :: c_ptr, c_int, c_double
       type(c_ptr), value :: A
       real(c_double), intent(in) :: val(*)
       integer(c_int), value :: flags
       integer(c_int) :: c_set_values
     end function c_set_values
     function c_multivec_create(X, n, k, prec) bind(c, name="bsr_multivec_create")
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr) :: X
       integer(c_int64_t), value :: n
       integer(c_int), value :: k, prec
       integer(c_int) :: c_multivec_create
     end function c_multivec_create
     function c_solver_create_str(s, ctx, options) bind(c, name="bsr_solver_create_str")
       import :: c_ptr, c_char, c_int
       type(c_ptr) :: s
       type(c_ptr), value :: ctx
       character(kind=c_char), intent(in) :: options(*)
       integer(c_int) :: c_solver_create_str
     end function c_solver_create_str
     function c_solver_set_tolerances(s, rtol, atol, maxit) bind(c, name="bsr_solver_set_tolerances")
       import :: c_ptr, c_double, c_int
       type(c_ptr), value :: s
       real(c_double), value :: rtol, atol
       integer(c_int), value :: maxit
       integer(c_int) :: c_solver_set_tolerances
     end function c_solver_set_tolerances
     function c_solver_error_estimate(s, B, X, est, its) bind(c, name="bsr_solver_error_estimate")
       import :: c_ptr, c_int, c_double
       type(c_ptr), value :: s, B, X
       real(c_double) :: est(*)
       integer(c_int) :: its
       integer(c_int) :: c_solver_error_estimate
     end function c_solver_error_estimate
     function c_solver_solve(s, B, X, st) bind(c, name="bsr_solver_solve")
       import :: c_ptr, c_int
       type(c_ptr), value :: s, B, X, st
       integer(c_int) :: c_solver_solve
     end function c_solver_solve
     function c_stats_new() bind(c, name="bsrf_stats_new")
       import :: c_ptr
       type(c_ptr) :: c_stats_new
     end function c_stats_new
     subroutine c_stats_col(st, j, iterations, reason, relres, resnorm) bind(c, name="bsrf_stats_col")
       import :: c_ptr, c_int, c_double
       type(c_ptr), value :: st
       integer(c_int), value :: j
       integer(c_int) :: iterations, reason
       real(c_double) :: relres, resnorm
     end subroutine c_stats_col
     subroutine c_stats_run(st, setup_s, solve_s, fill, device) bind(c, name="bsrf_stats_run")
       import :: c_ptr, c_int, c_double
       type(c_ptr), value :: st
       real(c_double) :: setup_s, solve_s, fill
       integer(c_int) :: device
     end subroutine c_stats_run
     function c_stats_info(st) bind(c, name="bsrf_stats_info")
       import :: c_ptr
       type(c_ptr), value :: st
       type(c_ptr) :: c_stats_info
     end function c_stats_info
     function c_last_error() bind(c, name="bsrf_last_error")
       import :: c_ptr
       type(c_ptr) :: c_last_error
     end function c_last_error
     ! bsrf_size's what: matrix block rows, block size, multivector rows,
     ! columns, stats columns; bsrf_free's kind: context .. stats record
     function c_size(p, what) bind(c, name="bsrf_size")
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: p
       integer(c_int), value :: what
       integer(c_int64_t) :: c_size
     end function c_size
     subroutine c_free(p, kind) bind(c, name="bsrf_free")
       import :: c_ptr, c_int
       type(c_ptr), value :: p
       integer(c_int), value :: kind
     end subroutine c_free
     function c_name(what, code) bind(c, name="bsrf_name")
       import :: c_ptr, c_int
       integer(c_int), value :: what, code
       type(c_ptr) :: c_name
     end function c_name
     function c_solver_prepare(s, A, refactor) bind(c, name="bsrf_solver_prepare")
       import :: c_ptr, c_int
       type(c_ptr), value :: s, A
       integer(c_int), value :: refactor
       integer(c_int) :: c_solver_prepare
     end function c_solver_prepare
     function c_colmajor(X, a, ld, to) bind(c, name="bsrf_colmajor")
       import :: c_ptr, c_int64_t, c_int
       type(c_ptr), value :: X, a
       integer(c_int64_t), value :: ld
       integer(c_int), value :: to
       integer(c_int) :: c_colmajor
     end function c_colmajor
  end interface

contains

  ! Fortran copy of a NUL-terminated C string ("" for NULL).
  function f_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
       s = ""
       return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
       s(i:i) = chars(i)
    end do
  end function f_string

  ! Free the C object p of the given kind (bsrf_free) and forget it.
  subroutine release(p, kind)
    type(c_ptr), intent(inout) :: p
    integer(c_int), intent(in) :: kind
    call c_free(p, kind)
    p = c_null_ptr
  end subroutine release

  ! 1 when the optional flag is present and true, else 0.
  integer(c_int) function flag(x)
    logical, intent(in), optional :: x
    flag = 0
    if (present(x)) then
       if (x) flag = 1
    end if
  end function flag

  ! Index base: the optional argument, else 1.
  integer(c_int) function base_of(base)
    integer, intent(in), optional :: base
    base_of = 1
    if (present(base)) base_of = base
  end function base_of

  ! A backend context: backend "cpu" or "cuda" (device id, default 0).
  integer function bsr_context_new(ctx, backend, device) result(ierr)
    type(bsr_context), intent(out) :: ctx
    character(len=*), intent(in) :: backend
    integer, intent(in), optional :: device
    integer(c_int) :: kind, dev
    dev = 0
    if (present(device)) dev = device
    select case (backend)
    case ("cpu")
       kind = 0
    case ("cuda")
       kind = 1
    case default
       ierr = BSR_ERR_ARG
       return
    end select
    ierr = c_context_create(ctx%ptr, kind, dev, c_null_ptr)
  end function bsr_context_new

  ! Free a context (after the solvers that use it).
  subroutine bsr_context_free(ctx)
    type(bsr_context), intent(inout) :: ctx
    call release(ctx%ptr, K_CONTEXT)
  end subroutine bsr_context_free

  ! A from BSR arrays: nbrows x nbcols blocks of b x b, rowptr(nbrows+1),
  ! colind(nnzb), val(b*b*nnzb); blocks row-major unless colmajor (val(b,b,nnzb)
  ! indexed val(i,j,k) is column-major); indices 1-based unless base = 0.
  integer function bsr_matrix_from_bsr(A, nbrows, nbcols, b, rowptr, colind, val, base, colmajor) &
       result(ierr)
    type(bsr_matrix), intent(out) :: A
    integer, intent(in) :: nbrows, nbcols, b
    integer(c_int), intent(in) :: rowptr(:), colind(:)
    real(c_double), intent(in) :: val(*)
    integer, intent(in), optional :: base
    logical, intent(in), optional :: colmajor
    ierr = BSR_ERR_SIZE
    if (nbrows < 0 .or. size(rowptr) < nbrows + 1) return
    if (size(colind) < rowptr(nbrows + 1) - base_of(base)) return
    ierr = c_from_bsr(A%ptr, nbrows, nbcols, b, rowptr, colind, val, base_of(base), flag(colmajor))
  end function bsr_matrix_from_bsr

  ! A from an n x n scalar CSR matrix rowptr(n+1), colind(nnz), val(nnz),
  ! stored in b x b blocks (b absent or 0: chosen from the pattern); indices
  ! 1-based unless base = 0; duplicates are summed.
  integer function bsr_matrix_from_csr(A, n, rowptr, colind, val, base, b) result(ierr)
    type(bsr_matrix), intent(out) :: A
    integer, intent(in) :: n
    integer(c_int), intent(in) :: rowptr(:), colind(:)
    real(c_double), intent(in) :: val(:)
    integer, intent(in), optional :: base, b
    integer(c_int) :: bb, b_used
    bb = 0
    if (present(b)) bb = b
    ierr = BSR_ERR_SIZE
    if (n < 1 .or. size(rowptr) < n + 1) return
    if (size(colind) < rowptr(n + 1) - base_of(base) .or. size(val) < rowptr(n + 1) - base_of(base)) return
    ierr = c_from_csr(A%ptr, n, rowptr, colind, val, base_of(base), bb, b_used)
  end function bsr_matrix_from_csr

  ! New values of A in BSR layout (same pattern; colmajor as at creation).
  integer function bsr_matrix_set_bsr_values(A, val, colmajor) result(ierr)
    type(bsr_matrix), intent(inout) :: A
    real(c_double), intent(in) :: val(*)
    logical, intent(in), optional :: colmajor
    ierr = c_set_values(A%ptr, val, flag(colmajor))
  end function bsr_matrix_set_bsr_values

  ! New values of A from CSR arrays with the pattern A was created from.
  integer function bsr_matrix_set_csr_values(A, n, rowptr, colind, val, base) result(ierr)
    type(bsr_matrix), intent(inout) :: A
    integer, intent(in) :: n
    integer(c_int), intent(in) :: rowptr(:), colind(:)
    real(c_double), intent(in) :: val(:)
    integer, intent(in), optional :: base
    ierr = BSR_ERR_SIZE
    if (n < 1 .or. size(rowptr) < n + 1) return
    if (size(colind) < rowptr(n + 1) - base_of(base) .or. size(val) < rowptr(n + 1) - base_of(base)) return
    ierr = c_csr_values(A%ptr, n, rowptr, colind, val, base_of(base))
  end function bsr_matrix_set_csr_values

  ! Scalar rows of A (block rows times b).
  integer function bsr_matrix_rows(A)
    type(bsr_matrix), intent(in) :: A
    bsr_matrix_rows = int(c_size(A%ptr, SZ_NBROWS) * c_size(A%ptr, SZ_BLOCK))
  end function bsr_matrix_rows

  ! Block size b of A.
  integer function bsr_matrix_blocksize(A)
    type(bsr_matrix), intent(in) :: A
    bsr_matrix_blocksize = int(c_size(A%ptr, SZ_BLOCK))
  end function bsr_matrix_blocksize

  ! Free A (after the solvers set up with it).
  subroutine bsr_matrix_free(A)
    type(bsr_matrix), intent(inout) :: A
    call release(A%ptr, K_MATRIX)
  end subroutine bsr_matrix_free

  ! X: n rows x k vectors (double), zero.
  integer function bsr_multivec_new(X, n, k) result(ierr)
    type(bsr_multivec), intent(out) :: X
    integer, intent(in) :: n, k
    ierr = c_multivec_create(X%ptr, int(n, c_int64_t), k, 0)
  end function bsr_multivec_new

  ! X = a (to 0) or a = X (to 1): a a vector (k = 1) or an n x k array,
  ! column j the j-th vector; BSR_ERR_SIZE unless X is n rows of k columns.
  integer function colmajor(X, a, to) result(ierr)
    type(bsr_multivec), intent(in) :: X
    real(c_double), intent(in), target, contiguous :: a(..)
    integer(c_int), intent(in) :: to
    integer(c_int64_t) :: n
    ierr = BSR_ERR_SIZE
    if (rank(a) < 1 .or. rank(a) > 2) return
    n = size(a, 1, kind=c_int64_t)
    if (n /= c_size(X%ptr, SZ_ROWS) .or. size(a, kind=c_int64_t) /= n * c_size(X%ptr, SZ_COLS)) return
    ierr = c_colmajor(X%ptr, c_loc(a), n, to)
  end function colmajor

  ! X = v: a vector v(n) for one column, or v(n, k).
  integer function bsr_multivec_set(X, v) result(ierr)
    type(bsr_multivec), intent(inout) :: X
    real(c_double), intent(in), target, contiguous :: v(..)
    ierr = colmajor(X, v, 0_c_int)
  end function bsr_multivec_set

  ! v = X: v(n) for one column, or v(n, k).
  integer function bsr_multivec_get(X, v) result(ierr)
    type(bsr_multivec), intent(in) :: X
    real(c_double), intent(inout), target, contiguous :: v(..)
    ierr = colmajor(X, v, 1_c_int)
  end function bsr_multivec_get

  ! Free X (its values, on the host or the device).
  subroutine bsr_multivec_free(X)
    type(bsr_multivec), intent(inout) :: X
    call release(X%ptr, K_MULTIVEC)
  end subroutine bsr_multivec_free

  ! A solver from an option string ("method=bicgstab,precond=ilu2,rtol=1e-8",
  ! keys as for the C library and the CLI's --config); on ctx when given, else the CPU.
  integer function bsr_solver_new(s, options, ctx) result(ierr)
    type(bsr_solver), intent(out) :: s
    character(len=*), intent(in) :: options
    type(bsr_context), intent(in), optional :: ctx
    type(c_ptr) :: c
    c = c_null_ptr
    if (present(ctx)) c = ctx%ptr
    ierr = c_solver_create_str(s%ptr, c, trim(options) // c_null_char)
  end function bsr_solver_new

  ! Preconditioner setup for A (A must stay alive while s solves with it).
  integer function bsr_solver_setup(s, A) result(ierr)
    type(bsr_solver), intent(inout) :: s
    type(bsr_matrix), intent(in) :: A
    ierr = c_solver_prepare(s%ptr, A%ptr, 0)
  end function bsr_solver_setup

  ! Numeric refactorization for new values of A on the pattern of the setup.
  integer function bsr_solver_refactor(s, A) result(ierr)
    type(bsr_solver), intent(inout) :: s
    type(bsr_matrix), intent(in) :: A
    ierr = c_solver_prepare(s%ptr, A%ptr, 1)
  end function bsr_solver_refactor

  ! New rtol, atol and maxit for the next solves, without a new setup (the
  ! preconditioner stays); BSR_ERR_ARG for a value the option string refuses.
  integer function bsr_solver_set_tolerances(s, rtol, atol, maxit) result(ierr)
    type(bsr_solver), intent(inout) :: s
    real(c_double), intent(in) :: rtol, atol
    integer, intent(in) :: maxit
    ierr = c_solver_set_tolerances(s%ptr, rtol, atol, int(maxit, c_int))
  end function bsr_solver_set_tolerances

  ! An estimate of X's error as a solution of A X = B (one entry of est per
  ! column, size(est) >= the columns): ||e|| / ||x|| with A e = B - A X solved
  ! to rtol 0.01 by s (its later solves unchanged); its: that solve's
  ! iterations.  BSR_ERR_NOCONV / BSR_ERR_BREAKDOWN when it stopped short
  ! (est then lower bounds).
  integer function bsr_solver_error_estimate(s, B, X, est, its) result(ierr)
    type(bsr_solver), intent(inout) :: s
    type(bsr_multivec), intent(in) :: B, X
    real(c_double), intent(out) :: est(:)
    integer, intent(out), optional :: its
    integer(c_int) :: n
    if (size(est) < c_size(X%ptr, SZ_COLS)) then
       ierr = BSR_ERR_SIZE
       return
    end if
    ierr = c_solver_error_estimate(s%ptr, B%ptr, X%ptr, est, n)
    if (present(its)) its = n
  end function bsr_solver_error_estimate

  ! Solve A X = B, X holding the initial guess; stats per right-hand side.
  ! BSR_ERR_NOCONV or BSR_ERR_BREAKDOWN when a column did not converge.
  integer function bsr_solver_solve(s, B, X, stats) result(ierr)
    type(bsr_solver), intent(inout) :: s
    type(bsr_multivec), intent(in) :: B
    type(bsr_multivec), intent(inout) :: X
    type(bsr_stats), intent(out), optional :: stats
    type(c_ptr) :: st
    integer(c_int) :: j, it, reason, dev
    real(c_double) :: relres, resnorm
    st = c_stats_new()
    ierr = c_solver_solve(s%ptr, B%ptr, X%ptr, st)
    if (present(stats)) then
       stats%k = int(c_size(st, SZ_STATS))
       allocate(stats%iterations(stats%k), stats%reason(stats%k), &
            stats%relres(stats%k), stats%resnorm(stats%k))
       do j = 1, stats%k
          call c_stats_col(st, j - 1, it, reason, relres, resnorm)
          stats%iterations(j) = it
          stats%reason(j) = reason
          stats%relres(j) = relres
          stats%resnorm(j) = resnorm
       end do
       call c_stats_run(st, stats%setup_s, stats%solve_s, stats%fill, dev)
       stats%device = dev /= 0
       stats%precond_info = f_string(c_stats_info(st))
    end if
    call c_free(st, K_STATS)
  end function bsr_solver_solve

  ! Free s: its preconditioner, workspaces and device copies.
  subroutine bsr_solver_free(s)
    type(bsr_solver), intent(inout) :: s
    call release(s%ptr, K_SOLVER)
  end subroutine bsr_solver_free

  ! Release the arrays of a stats record.
  subroutine bsr_stats_free(stats)
    type(bsr_stats), intent(inout) :: stats
    if (allocated(stats%iterations)) deallocate(stats%iterations, stats%reason, stats%relres, stats%resnorm)
    if (allocated(stats%precond_info)) deallocate(stats%precond_info)
    stats%k = 0
  end subroutine bsr_stats_free

  ! Short fixed text of a status code.
  function bsr_status_name(status) result(msg)
    integer, intent(in) :: status
    character(len=:), allocatable :: msg
    msg = f_string(c_name(0, status))
  end function bsr_status_name

  ! Detail of the last error in this thread ("" if none).
  function bsr_error_message() result(msg)
    character(len=:), allocatable :: msg
    msg = f_string(c_last_error())
  end function bsr_error_message

  ! "status: detail" for a status returned by this module.
  function bsr_status_message(status) result(msg)
    integer, intent(in) :: status
    character(len=:), allocatable :: msg
    msg = bsr_status_name(status)
    if (status /= BSR_OK .and. len(bsr_error_message()) > 0) msg = msg // ": " // bsr_error_message()
  end function bsr_status_message

  ! Why a column stopped ("converged", "maxit", "breakdown", ...).
  function bsr_reason_name(reason) result(msg)
    integer, intent(in) :: reason
    character(len=:), allocatable :: msg
    msg = f_string(c_name(1, reason))
  end function bsr_reason_name

end module bsrsolve
