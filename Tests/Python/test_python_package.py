"""clients/python as a package: it builds and installs with pip, carries its type marker,
and passes `mypy --strict` (with the example plugin written on it)."""
import os
import shutil
import subprocess
import sys
import zipfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PACKAGE = os.path.join(ROOT, "clients", "python")


def test_the_package_builds_installs_and_imports(tmp_path):
    # Built from a copy, so that the build leaves nothing in the checkout.
    source = tmp_path / "source"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".mypy_cache"))
    wheels = tmp_path / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "--disable-pip-version-check", "-q", "-w", str(wheels), str(source)],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.iterdir()
    assert wheel.name.startswith("eventbus_client-0.1.0-")
    names = zipfile.ZipFile(wheel).namelist()
    assert {"eventbus/__init__.py", "eventbus/client.py", "eventbus/plugin.py", "eventbus/py.typed"} <= set(names)
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Name: eventbus-client" in text and "Requires-Dist: pyzmq" in text
    target = tmp_path / "installed"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check",
                              "-q", "--target", str(target), str(wheel)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    imported = subprocess.run([sys.executable, "-c", "import eventbus; print(eventbus.__file__, eventbus.__version__)"],
                              capture_output=True, text=True, cwd=tmp_path, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(target)})
    assert imported.returncode == 0, imported.stderr
    path, version = imported.stdout.split()
    assert path.startswith(str(target)) and version == "0.1.0"


def test_the_package_and_the_example_pass_mypy_strict(tmp_path):
    result = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
                             os.path.join(PACKAGE, "src", "eventbus"),
                             os.path.join(ROOT, "examples", "python-plugin", "plugin.py")],
                            capture_output=True, text=True, timeout=300,
                            env={**os.environ, "MYPYPATH": os.path.join(PACKAGE, "src")})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success" in result.stdout
