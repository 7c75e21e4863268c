# mcp-notebook: load the %mcp magics in every Jupyter kernel of this Python environment.
#
# pip installs this file as <prefix>/etc/ipython/startup/50-mcp-notebook.py; IPython runs
# the startup files of <sys.prefix>/etc/ipython/startup at every start. Only kernels load
# the extension (terminal IPython does not), nothing is printed, and loading starts no
# thread or process. Opt out with the environment variable MCP_NOTEBOOK_NO_AUTOLOAD=1
# (any value but "", "0", "false", "no"); `%load_ext mcp_notebook` still works then.


def _mcp_notebook_autoload() -> None:
    import os

    if os.environ.get("MCP_NOTEBOOK_NO_AUTOLOAD", "").strip().lower() not in ("", "0", "false", "no"):
        return
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return  # terminal IPython or a script: %load_ext mcp_notebook by hand there
    try:
        shell.extension_manager.load_extension("mcp_notebook")
    except Exception as exc:  # a broken install must not break the kernel's start
        import warnings

        warnings.warn(f"mcp-notebook: could not auto-load the %mcp magics: {exc!r}", stacklevel=1)


_mcp_notebook_autoload()
del _mcp_notebook_autoload
