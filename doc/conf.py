"""Sphinx configuration of the skcal documentation site.

Build (from the repository root, against the installed package)::

    sphinx-build -W --keep-going -b html doc doc/_build/html

Nothing is fetched from the network: no remote images or fonts, and the
intersphinx inventories of scikit-learn and numpy are the small local ones of
doc/_intersphinx/ (written by its make_inventories.py).
"""

import os
import pathlib
import re

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = None

import skcal

project = "skcal"
author = "the skcal developers"
copyright = "the skcal developers"
version = release = skcal.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "**.codeobj.json",
                    "_generated"]  # included by pages, not pages themselves

# -- API reference ----------------------------------------------------------
autosummary_generate = True
# members are listed by the class template (doc/_templates/autosummary/class.rst);
# inherited scikit-learn methods are skipped by _skip_foreign_members below
autodoc_default_options = {}
# numpydoc renders the Parameters/Returns/Attributes sections; the public
# methods of each class are listed by the class template, so numpydoc's own
# member tables (which would repeat every inherited sklearn method) are off.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# numpydoc's validation of every documented docstring, with the checks of
# pyproject.toml's [tool.numpydoc_validation] (the pre-commit hook's): a
# failure is a warning, an error under -W.
_PYPROJECT = pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml"
if tomllib is not None and _PYPROJECT.is_file():
    with open(_PYPROJECT, "rb") as f:
        _validation = tomllib.load(f)["tool"]["numpydoc_validation"]
    numpydoc_validation_checks = set(_validation["checks"])
    # no exclusions beyond pyproject.toml's (private names, dunder methods)
    numpydoc_validation_exclude = set(_validation["exclude"])
else:
    numpydoc_validation_checks = set()
# Signatures are shown without their annotations: the numpydoc Parameters and
# Returns sections give each type in words, and an annotation such as
# numpy.typing.ArrayLike would be spelled out as its whole Union.
autodoc_typehints = "none"
# No cross-referencing of types: it would link "array-like" etc. to the numpy
# and Python glossaries, which need intersphinx (no network at build time).
numpydoc_xref_param_type = False

# -- Markdown guide pages ---------------------------------------------------
# headings get GitHub-style anchors, so links such as
# bibliography.md#hu-jambulapati-tian-and-yang-2024 work on GitHub and here.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

# -- Gallery ----------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",  # run every example, not only plot_*
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "plot_gallery": "True",
    "matplotlib_animations": False,
    "show_memory": False,
    "reference_url": {},
    "backreferences_dir": None,
    "within_subsection_order": "FileNameSortKey",
}

# -- Output -----------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skcal {release}"
html_static_path = ["_static"]
html_css_files = ["skcal.css"]
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"bibliography": [], "index": []}

# Links to scikit-learn's and numpy's pages, from local inventories of the
# names the docs refer to (no network at build time; doc/_intersphinx/).
intersphinx_mapping = {
    "sklearn": ("https://scikit-learn.org/stable/", "_intersphinx/sklearn.inv"),
    "numpy": ("https://numpy.org/doc/stable/", "_intersphinx/numpy.inv"),
}
os.environ.setdefault("MPLBACKEND", "Agg")


def _check_api_coverage(app):
    """Warn (an error under -W) when api.rst misses a name of skcal.__all__."""
    from sphinx.util import logging

    text = open(os.path.join(app.srcdir, "api.rst"), encoding="utf-8").read()
    listed = {line.strip() for line in text.splitlines()}
    missing = [
        name for name in skcal.__all__ if name not in listed and not name.startswith("__")
    ]
    if missing:
        logging.getLogger(__name__).warning(
            "api.rst does not list these names of skcal.__all__: %s",
            ", ".join(missing),
        )


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Skip members inherited from scikit-learn (their docstrings link to
    scikit-learn's own pages, which this site does not have)."""
    module = getattr(obj, "__module__", None) or ""
    if what == "class" and module and not module.startswith("skcal"):
        return True
    return None


_CODE_NAME = re.compile(r"^(?:skcal\.)?([A-Za-z_]\w*)(?:\.([a-z_]\w*))?(?:\(.*\))?$", re.S)


def _link_public_names(app, doctree, docname):
    """Link the guide's inline code that names a public object to its API page.

    The guide pages are Markdown read on GitHub too, so they write public
    names as plain code (``CalibrationTester``, ``skcal.binned_ece(...)``,
    ``CalibrationTester.fit``); on this site each becomes a link to the
    name's page in the API reference (to the method's entry for
    ``Class.method``).
    """
    from docutils import nodes

    if docname.startswith("generated/") or not hasattr(app.builder, "get_relative_uri"):
        return
    public = set(skcal.__all__)
    for literal in list(doctree.findall(nodes.literal)):
        if isinstance(literal.parent, nodes.reference):
            continue
        match = _CODE_NAME.match(literal.astext())
        if not match or match.group(1) not in public:
            continue
        name, member = match.groups()
        obj = getattr(skcal, name)
        if member is not None and not hasattr(obj, member):
            continue
        uri = app.builder.get_relative_uri(docname, f"generated/skcal.{name}")
        if member is not None:
            uri += f"#skcal.{name}.{member}"
        reference = nodes.reference("", "", internal=True, refuri=uri)
        literal.replace_self(reference)
        reference += literal


def write_measures_table(app):
    """Write ``_generated/measures_table.md``, the measures table, from the registry.

    Every row comes from a measure's spec (``skcal._specs.docs_table``):
    name, class, scorer, tester name, sketch support and the docs line. The
    guide's measures page includes the file, so a registered measure is in
    the docs without another edit.
    """
    from skcal import measures  # noqa: F401  (loads every built-in spec)
    from skcal._specs import docs_table

    out = pathlib.Path(app.srcdir) / "_generated"
    out.mkdir(exist_ok=True)
    text = "% generated by doc/conf.py from skcal._specs (do not edit)\n\n"
    target = out / "measures_table.md"
    text += docs_table()
    if not target.is_file() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")  # unchanged: no rebuild
    return target


def setup(app):
    app.connect("builder-inited", write_measures_table)
    app.connect("builder-inited", _check_api_coverage)
    app.connect("doctree-resolved", _link_public_names)
    app.connect("autodoc-skip-member", _skip_foreign_members)
