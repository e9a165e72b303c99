// Build the prebuilt JupyterLab extension into ../sfclab/labextension (the wheel
// installs it as share/jupyter/labextensions/sfclab-languages).  What JupyterLab's
// `jupyter labextension build` does, without needing JupyterLab installed: the
// core's shared-package data comes from the @jupyterlab/core-meta npm package.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const core = mkdtempSync(join(tmpdir(), "sfclab-core-"));
try {
  copyFileSync(require.resolve("@jupyterlab/core-meta/core.package.json"), join(core, "package.json"));
  const builder = require.resolve("@jupyterlab/builder/lib/build-labextension.js");
  execFileSync(process.execPath, [builder, "--core-path", core, here], { stdio: "inherit", cwd: here });
} finally {
  rmSync(core, { recursive: true, force: true });
}
