"""Write the intersphinx inventories of scikit-learn and numpy used by the docs.

The documentation build fetches nothing from the network, so instead of the
projects' own ``objects.inv`` (several MB, downloaded at build time) it reads
these small inventories, written by this script, of the scikit-learn and numpy
names the docstrings and guide pages refer to. A reference such as
``:class:`~sklearn.utils.Bunch``` or a numpydoc "See Also" entry
``sklearn.calibration.CalibratedClassifierCV`` then links to that project's
page. The addresses follow the projects' documentation layout (the API page of
a scikit-learn object is ``modules/generated/<name>.html``, of a numpy one
``reference/generated/<name>.html``). A name missing here is not an error: it
stays plain code. Add the name and run, from the repository root::

    python doc/_intersphinx/make_inventories.py
"""

import pathlib
import zlib

HERE = pathlib.Path(__file__).resolve().parent

# name -> (Sphinx role, address relative to the project's root; "$" is the name)
SKLEARN = {
    "sklearn.base.BaseEstimator": ("py:class", "modules/generated/$.html#$"),
    "sklearn.base.clone": ("py:function", "modules/generated/$.html#$"),
    "sklearn.calibration.CalibratedClassifierCV": ("py:class", "modules/generated/$.html#$"),
    "sklearn.calibration.CalibrationDisplay": ("py:class", "modules/generated/$.html#$"),
    "sklearn.calibration.calibration_curve": ("py:function", "modules/generated/$.html#$"),
    "sklearn.ensemble.HistGradientBoostingClassifier": (
        "py:class",
        "modules/generated/$.html#$",
    ),
    "sklearn.frozen.FrozenEstimator": ("py:class", "modules/generated/$.html#$"),
    "sklearn.isotonic.IsotonicRegression": ("py:class", "modules/generated/$.html#$"),
    "sklearn.isotonic.isotonic_regression": ("py:function", "modules/generated/$.html#$"),
    "sklearn.linear_model.LogisticRegression": ("py:class", "modules/generated/$.html#$"),
    "sklearn.metrics": ("py:module", "api/sklearn.metrics.html"),
    "sklearn.metrics.brier_score_loss": ("py:function", "modules/generated/$.html#$"),
    "sklearn.metrics.get_scorer": ("py:function", "modules/generated/$.html#$"),
    "sklearn.metrics.get_scorer_names": ("py:function", "modules/generated/$.html#$"),
    "sklearn.metrics.log_loss": ("py:function", "modules/generated/$.html#$"),
    "sklearn.metrics.make_scorer": ("py:function", "modules/generated/$.html#$"),
    "sklearn.model_selection.GridSearchCV": ("py:class", "modules/generated/$.html#$"),
    "sklearn.model_selection.cross_val_predict": ("py:function", "modules/generated/$.html#$"),
    "sklearn.model_selection.cross_val_score": ("py:function", "modules/generated/$.html#$"),
    "sklearn.model_selection.cross_validate": ("py:function", "modules/generated/$.html#$"),
    "sklearn.pipeline.Pipeline": ("py:class", "modules/generated/$.html#$"),
    "sklearn.set_config": ("py:function", "modules/generated/$.html#$"),
    "sklearn.utils.Bunch": ("py:class", "modules/generated/$.html#$"),
    "sklearn.utils.metadata_routing.MetadataRouter": ("py:class", "modules/generated/$.html#$"),
    "sklearn.utils.metadata_routing.process_routing": (
        "py:function",
        "modules/generated/$.html#$",
    ),
}
NUMPY = {
    "numpy.ndarray": ("py:class", "reference/generated/$.html#$"),
    "numpy.random.Generator": ("py:class", "reference/random/generator.html#$"),
    "numpy.random.RandomState": ("py:class", "reference/random/legacy.html#$"),
    "numpy.typing.ArrayLike": ("py:data", "reference/typing.html#$"),
    "numpy.typing.NDArray": ("py:data", "reference/typing.html#$"),
}


def write(path, project, entries):
    """An inventory in Sphinx's format 2: four header lines, then zlib-compressed lines."""
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n"
        "# Version: stable\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    lines = "".join(
        f"{name} {role} 1 {uri.replace('$', name)} -\n"
        for name, (role, uri) in sorted(entries.items())
    )
    path.write_bytes(header.encode() + zlib.compress(lines.encode()))


if __name__ == "__main__":
    write(HERE / "sklearn.inv", "scikit-learn", SKLEARN)
    write(HERE / "numpy.inv", "NumPy", NUMPY)
