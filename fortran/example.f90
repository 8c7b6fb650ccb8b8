! SPDX-License-Identifier: BSD-3-Clause
! Example and test of the Fortran module: a 2D grid problem with two coupled
! unknowns per point (2 x 2 blocks, nonsymmetric), built by hand as 0-based BSR
! and as 1-based CSR, solved for a known solution; setup, solve with two
! right-hand sides, refactor with new values, solve again.  The residual is
! recomputed here from the CSR arrays.  Exits 1 on any failure; with the
! argument --perturb it spoils the solution before checking (so must fail).
program example
  use bsrsolve
  use, intrinsic :: iso_c_binding, only: c_int, c_double
  implicit none
  integer, parameter :: m = 24, nb = m * m, n = 2 * nb
  integer(c_int), allocatable :: brow(:), bcol(:), rowptr(:), colind(:)
  real(c_double), allocatable :: bval(:), val(:), xe(:), rhs(:, :), x(:, :)
  type(bsr_matrix) :: A, A2
  type(bsr_multivec) :: B, X1
  type(bsr_solver) :: s, s2, s3
  type(bsr_stats) :: st
  character(len=16) :: arg
  logical :: perturb
  integer :: ierr, i, its
  real(c_double) :: est(1), err

  perturb = .false.
  if (command_argument_count() > 0) then
     call get_command_argument(1, arg)
     perturb = arg == "--perturb"
  end if
  call build_bsr(brow, bcol, bval)
  call bsr_to_csr(brow, bcol, bval, rowptr, colind, val)
  allocate(xe(n), rhs(n, 2), x(n, 2))
  do i = 1, n
     xe(i) = sin(0.37d0 * i) + 0.5d0
  end do
  rhs(:, 1) = csr_matvec(val, xe)
  rhs(:, 2) = 2 * rhs(:, 1)

  ! 1-based CSR in 2 x 2 blocks; ILU(0)-BiCGStab, two right-hand sides.
  call check(bsr_matrix_from_csr(A, n, rowptr, colind, val, b=2), "matrix from CSR")
  if (bsr_matrix_blocksize(A) /= 2 .or. bsr_matrix_rows(A) /= n) call fail("wrong block size")
  call check(bsr_multivec_new(B, n, 2), "multivec B")
  call check(bsr_multivec_new(X1, n, 2), "multivec X")
  call check(bsr_multivec_set(B, rhs), "set B")
  call check(bsr_solver_new(s, "method=bicgstab,precond=ilu0,rtol=1e-10"), "solver")
  call check(bsr_solver_setup(s, A), "setup")
  call check(bsr_solver_solve(s, B, X1, st), "solve")
  call check(bsr_multivec_get(X1, x), "get X")
  if (st%k /= 2) call fail("stats: k /= 2")
  print '(a, 2i5, a, 2es10.2, 2a)', " csr, bicgstab+ilu0: iterations", st%iterations, &
       ", relres", st%relres, ", ", bsr_reason_name(st%reason(1))
  call expect(x(:, 1), rhs(:, 1), xe)
  call expect(x(:, 2), rhs(:, 2), 2 * xe)

  ! New values (A doubled) on the same pattern: refactor, solve again.
  call check(bsr_matrix_set_csr_values(A, n, rowptr, colind, 2 * val), "new values")
  call check(bsr_solver_refactor(s, A), "refactor")
  call check(bsr_solver_solve(s, B, X1, st), "solve after refactor")
  call check(bsr_multivec_get(X1, x), "get X")
  call expect(x(:, 1), rhs(:, 1), xe / 2, 2.0d0)
  call expect(x(:, 2), rhs(:, 2), xe, 2.0d0)

  ! 0-based BSR (row-major blocks); ILU2-GMRES, one right-hand side.
  call check(bsr_matrix_from_bsr(A2, nb, nb, 2, brow, bcol, bval, base=0), "matrix from BSR")
  call bsr_multivec_free(B)
  call bsr_multivec_free(X1)
  call check(bsr_multivec_new(B, n, 1), "multivec B")
  call check(bsr_multivec_new(X1, n, 1), "multivec X")
  call check(bsr_multivec_set(B, rhs(:, 1)), "set B")
  call check(bsr_solver_new(s2, "method=gmres,precond=ilu2,tau1=1e-2,rtol=1e-10"), "solver 2")
  call check(bsr_solver_setup(s2, A2), "setup 2")
  call check(bsr_solver_solve(s2, B, X1, st), "solve 2")
  call check(bsr_multivec_get(X1, x(:, 1)), "get X")
  print '(a, i5, a, es10.2, 2a)', " bsr, gmres+ilu2: iterations", st%iterations(1), &
       ", relres", st%relres(1), ", ", st%precond_info
  call expect(x(:, 1), rhs(:, 1), xe)

  ! Looser, then tighter tolerances on the same setup: fewer, then more iterations.
  call check(bsr_solver_set_tolerances(s2, 1d-3, 0d0, 500), "set tolerances")
  x(:, 1) = 0
  call check(bsr_multivec_set(X1, x(:, 1)), "zero X")
  call check(bsr_solver_solve(s2, B, X1, st), "loose solve")
  i = st%iterations(1)
  if (st%relres(1) > 1d-3) call fail("loose solve: relres above 1e-3")
  ! the loose solution's error, estimated and against the exact solution
  call check(bsr_solver_error_estimate(s2, B, X1, est, its), "error estimate")
  call check(bsr_multivec_get(X1, x(:, 1)), "get X")
  err = norm2(x(:, 1) - xe) / norm2(x(:, 1))
  print '(a, 2es10.2, i5)', " error estimate, error, iterations:", est(1), err, its
  if (.not. (est(1) > err / 2 .and. est(1) < 2 * err) .or. its < 1) call fail("error estimate off")
  x(:, 1) = 0
  call check(bsr_solver_set_tolerances(s2, 1d-12, 0d0, 500), "set tolerances")
  call check(bsr_multivec_set(X1, x(:, 1)), "zero X")
  call check(bsr_solver_solve(s2, B, X1, st), "tight solve")
  if (st%iterations(1) <= i .or. st%relres(1) > 1d-12) call fail("tight solve: no more iterations")
  print '(a, 2i5)', " set_tolerances 1e-3, 1e-12: iterations", i, st%iterations(1)
  if (bsr_solver_set_tolerances(s2, -1d0, 0d0, 10) /= BSR_ERR_ARG) call fail("rtol < 0 accepted")

  ! Errors come back as a status with a message.
  ierr = bsr_solver_new(s3, "method=nonsense")
  if (ierr /= BSR_ERR_ARG .or. len(bsr_error_message()) == 0) call fail("bad option accepted")
  print '(2a)', " bad option: ", bsr_status_message(ierr)

  call bsr_solver_free(s)
  call bsr_solver_free(s2)
  call bsr_multivec_free(B)
  call bsr_multivec_free(X1)
  call bsr_matrix_free(A)
  call bsr_matrix_free(A2)
  call bsr_stats_free(st)
  deallocate(brow, bcol, bval, rowptr, colind, val, xe, rhs, x)
  print '(a)', " fortran example: ok"

contains

  ! The grid operator in 0-based BSR: per point a 2 x 2 diagonal block coupling
  ! the two unknowns, and upwind-skewed diagonal blocks to the 4 neighbours.
  subroutine build_bsr(brow, bcol, bval)
    integer(c_int), allocatable, intent(out) :: brow(:), bcol(:)
    real(c_double), allocatable, intent(out) :: bval(:)
    integer :: i, j, p, q, k, d
    integer, parameter :: di(4) = [-1, 1, 0, 0], dj(4) = [0, 0, -1, 1]
    real(c_double), parameter :: w(4) = [-1.3d0, -0.7d0, -1.1d0, -0.9d0]
    allocate(brow(nb + 1), bcol(5 * nb), bval(20 * nb))
    k = 0
    brow(1) = 0
    do j = 1, m
       do i = 1, m
          p = i + (j - 1) * m
          k = k + 1
          bcol(k) = p - 1
          bval(4 * k - 3:4 * k) = [4.6d0, 0.4d0, -0.3d0, 4.4d0]
          do d = 1, 4
             if (i + di(d) < 1 .or. i + di(d) > m .or. j + dj(d) < 1 .or. j + dj(d) > m) cycle
             q = p + di(d) + dj(d) * m
             k = k + 1
             bcol(k) = q - 1
             bval(4 * k - 3:4 * k) = [w(d), 0d0, 0d0, w(5 - d)]
          end do
          brow(p + 1) = k
       end do
    end do
  end subroutine build_bsr

  ! The same matrix as 1-based scalar CSR (zeros inside blocks left out).
  subroutine bsr_to_csr(brow, bcol, bval, rowptr, colind, val)
    integer(c_int), intent(in) :: brow(:), bcol(:)
    real(c_double), intent(in) :: bval(:)
    integer(c_int), allocatable, intent(out) :: rowptr(:), colind(:)
    real(c_double), allocatable, intent(out) :: val(:)
    integer :: p, k, r, c, nz
    allocate(rowptr(n + 1), colind(4 * brow(nb + 1)), val(4 * brow(nb + 1)))
    nz = 0
    rowptr(1) = 1
    do p = 1, nb
       do r = 0, 1
          do k = brow(p) + 1, brow(p + 1)
             do c = 0, 1
                if (bval(4 * (k - 1) + 2 * r + c + 1) == 0) cycle
                nz = nz + 1
                colind(nz) = 2 * bcol(k) + c + 1
                val(nz) = bval(4 * (k - 1) + 2 * r + c + 1)
             end do
          end do
          rowptr(2 * (p - 1) + r + 2) = nz + 1
       end do
    end do
  end subroutine bsr_to_csr

  ! y = A x with the CSR arrays, values v.
  function csr_matvec(v, xin) result(y)
    real(c_double), intent(in) :: v(:), xin(:)
    real(c_double) :: y(n)
    integer :: i, p
    y = 0
    do i = 1, n
       do p = rowptr(i), rowptr(i + 1) - 1
          y(i) = y(i) + v(p) * xin(colind(p))
       end do
    end do
  end function csr_matvec

  ! Fail unless x solves (scale*A) x = r to 1e-8 and matches the exact solution.
  subroutine expect(xs, r, xexact, scale)
    real(c_double), intent(in) :: xs(:), r(:), xexact(:)
    real(c_double), intent(in), optional :: scale
    real(c_double) :: f, res, err
    real(c_double) :: xc(n)
    f = 1
    if (present(scale)) f = scale
    xc = xs
    if (perturb) xc(n / 2) = xc(n / 2) + 1d-3
    res = sqrt(sum((r - csr_matvec(f * val, xc))**2) / sum(r**2))
    err = maxval(abs(xc - xexact))
    print '(a, es10.2, a, es10.2)', "   residual", res, ", max error", err
    if (res > 1d-8 .or. err > 1d-6) call fail("wrong solution")
  end subroutine expect

  ! Stop with the status message unless ierr is BSR_OK.
  subroutine check(ierr, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    if (ierr /= BSR_OK) call fail(what // ": " // bsr_status_message(ierr))
  end subroutine check

  ! Print msg and exit 1.
  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    print '(2a)', " FAILED: ", msg
    stop 1
  end subroutine fail

end program example
