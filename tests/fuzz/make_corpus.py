#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpora of the fuzzers (tests/fuzz/corpus/<target>/).

Seeds: the repository's matrices/ (large ones cut to their first entries),
small files of ../shared/matrices/real when present, the inline inputs of
tests/test_mmio.c (valid and malformed), and option / generator strings
taken from the tests and the README.  Run from anywhere; rewrites the
corpus directories (the committed corpus is this script's output)."""
import codecs, glob, gzip, os, re, shutil, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REAL = os.path.join(ROOT, "..", "shared", "matrices", "real")
OUT = os.path.join(HERE, "corpus")
MAX_SEED = 8192  # bytes: small seeds keep libFuzzer's mutations fast


def write(target, name, data):
    if isinstance(data, str):
        data = data.encode("latin-1")
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def head(path, max_bytes=MAX_SEED, fix_count=True):
    """The banner, comments, size line and as many entry lines as fit in
    max_bytes; with fix_count the size line's count is set to the lines
    kept (a valid file), else it is left (a truncated file)."""
    lines = open(path, "rb").read().decode("latin-1").splitlines(keepends=True)
    out, size_at, total, entries = [], None, 0, 0
    for ln in lines:
        if total + len(ln) > max_bytes and size_at is not None:
            break
        out.append(ln)
        total += len(ln)
        s = ln.strip()
        if size_at is None and out[0] is not ln and s and not s.startswith("%"):
            size_at = len(out) - 1
        elif size_at is not None and s and not s.startswith("%"):
            entries += 1
    if fix_count and size_at is not None:
        tok = out[size_at].split()
        if len(tok) == 3:      # coordinate: rows cols entries
            tok[2] = str(entries)
        elif len(tok) == 2:    # array: keep whole columns, as rows = entries / cols
            tok[0] = str(max(entries // max(int(tok[1]), 1), 0))
            keep = int(tok[0]) * int(tok[1])
            out = out[: size_at + 1 + keep]
        out[size_at] = " ".join(tok) + "\n"
    return "".join(out)


def c_strings(path):
    """(name, text) of every {"name.mtx", "text", ...} row of a C table and
    every put("name.mtx", "text" ...) call (adjacent literals joined)."""
    src = open(path).read()
    lit = r'"(?:[^"\\]|\\.)*"'
    found = []
    for m in re.finditer(r'(?:\{|put\()\s*"([\w.]+\.mtx)",\s*((?:' + lit + r'\s*)+)', src):
        parts = re.findall(lit, m.group(2))
        text = "".join(codecs.decode(p[1:-1], "unicode_escape") for p in parts)
        found.append((m.group(1), text))
    return found


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    # ---- fuzz_mmio: matrices
    for p in sorted(glob.glob(os.path.join(ROOT, "matrices", "*.mtx"))):
        name = os.path.basename(p)
        if name.endswith("_rhs.mtx"):
            continue
        if os.path.getsize(p) <= MAX_SEED:
            write("fuzz_mmio", name, open(p, "rb").read())
        else:
            write("fuzz_mmio", "head_" + name, head(p))
            write("fuzz_mmio", "trunc_" + name, head(p, 2048, fix_count=False))
    for name in ["opm_matr33_b3.mtx", "fasp_gre__115.mtx", "fasp_lns__131.mtx", "olm1000.mtx", "e05r0000.mtx"]:
        p = os.path.join(REAL, name)
        if os.path.exists(p):
            write("fuzz_mmio", "real_" + name, head(p))
    small = open(os.path.join(ROOT, "matrices", "laplace2d_8_pattern.mtx"), "rb").read()
    write("fuzz_mmio", "laplace2d_8_pattern.mtx.gz", gzip.compress(small, mtime=0))
    # ---- inline inputs of the tests: arrays to the dense reader, the rest to both
    for name, text in c_strings(os.path.join(ROOT, "tests", "test_mmio.c")):
        if not text and name != "empty.mtx":
            continue  # a file the test fills at run time
        dense = " array " in text.split("\n", 1)[0] or name.startswith(("arr", "d", "cdense"))
        write("fuzz_dense" if dense else "fuzz_mmio", "test_mmio_" + name, text)
        if not dense and name in ("empty.mtx", "trunc.mtx", "nan.mtx", "cat.mtx", "bigsize.mtx", "nul.mtx"):
            write("fuzz_dense", "test_mmio_" + name, text)
    # ---- fuzz_dense: right-hand sides
    for p in [os.path.join(ROOT, "matrices", "stencil3d_4_4_rhs.mtx"), os.path.join(REAL, "fasp_spe01_b3_rhs.mtx")]:
        if os.path.exists(p):
            write("fuzz_dense", "head_" + os.path.basename(p), head(p, 4096))
    rhs = "%%MatrixMarket matrix array real general\n4 1\n1\n2\n3\n4.5\n"
    write("fuzz_dense", "rhs4.mtx", rhs)
    write("fuzz_dense", "rhs4.mtx.gz", gzip.compress(rhs.encode(), mtime=0))
    write("fuzz_dense", "x0_4x2.mtx", "%%MatrixMarket matrix array real general\n% two columns\n4 2\n1\n0\n-1\n2e-3\n5\n6\n7\n8\n")
    write("fuzz_dense", "skew3.mtx", "%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n")
    write("fuzz_dense", "coord_rhs.mtx", "%%MatrixMarket matrix coordinate real general\n4 1 2\n1 1 1.5\n4 1 -2\n")
    # ---- fuzz_options: --config strings of the tests and the README
    opts = re.findall(r'(?:options_parse\(&\w+,|expect_error\(|create_str\(&\w+, NULL,)\s*((?:"(?:[^"\\]|\\.)*"\s*)+)',
                      open(os.path.join(ROOT, "tests", "test_options.c")).read())
    seen = set()
    for i, o in enumerate(opts):
        s = "".join(x[1:-1] for x in re.findall(r'"(?:[^"\\]|\\.)*"', o))
        if s not in seen:
            seen.add(s)
            write("fuzz_options", "test_options_%02d" % len(seen), s)
    for i, s in enumerate([
            "method=bicgstab,precond=ilu2,tau1=1e-2,reorder=nd:auto,rtol=1e-8",
            "method=gmres,restart=50,orth=cgs2,precond=ilut,tau1=1e-3,fill=3,keep_pattern=auto",
            "precond=ilu2,match=auto,pattern=auto,pattern_growth=2,factor=cpu,overlap=1",
            "method=cg,precond=ssor,omega=1.2,stag=20,max_restarts=3,dtol=1e6",
            " reorder = nd:4,seed=3 , precision=fp32 ,precond_precision=single,history=1,progress=0,profile=0",
            "reorder=metis", "reorder=amd", "reorder=natural", "reorder=rcm,maxit=0,atol=1e-300"]):
        write("fuzz_options", "readme_%02d" % i, s)
    # ---- fuzz_gen: --gen specs of the README and the tests (small sizes)
    for i, s in enumerate([
            "stencil3d:4:4", "stencil3d:3", "stencil3d:7:10", "poisson2d:9", "poisson2d:9,ax=2,ay=0.5",
            "poisson3d:5", "heat2d:8,dt=0.5", "heat3d:6,1e-3,scheme=cn", "elliptic2d:9,sigma=one,holes=0.1",
            "elliptic2d:n=9,x0=1.5,y1=3", "elliptic2d:n=9,ny=5", "convdiff2d:12,30", "convdiff2d:9,400,scheme=central",
            "convdiff3d:6,pe=5,scheme=central", "convdiff3d:6,30,ny=7,holes=0.2,seed=4", "cfd3d:6,5,10",
            "cfd3d:6,4,200,scheme=central,holes=0.1", "cfd3d:7,b=5,model=comp,dt=0.01,holes=0.1",
            "cfd3d:n=6,b=5,model=comp,nx=7", "rotconv3d:6,4", "rotconv3d:5,3,conv=100,nu=0.1,couple=0.5,seed=7",
            "rotconv3d:n=4,b=10,cfl=1,swirl=2,kcouple=1", "stencil3d:2000:4", "rotconv3d:640,10", "poisson2d:20000",
            "cfd3d:8,6", "convdiff2d:4,30,ny=4,holes=0.7", "convdiff2d:9,1e400", "elliptic2d:9,x0=2,x1=1", "unknown:3", "poisson2d",
            "coupled3d:6,5", "coupled3d:5,4,couple=0.5,ncouple=0.2,shift=0.1,pemin=0.5,pemax=3,seed=3",
            "coupled3d:640,10", "coupled3d:5,3,pemin=3"]):
        write("fuzz_gen", "spec_%02d" % i, s)
    total = sum(os.path.getsize(f) for f in glob.glob(os.path.join(OUT, "*", "*")))
    print("corpus: %d files, %d bytes" % (len(glob.glob(os.path.join(OUT, "*", "*"))), total))


if __name__ == "__main__":
    sys.exit(main())
