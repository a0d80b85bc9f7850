__version__ = "0.1.0"


def __getattr__(name):
    "Lazy top-level API: `lengen.load_model` without importing torch on `import lengen`."
    if name == "load_model":
        from .models.build import load_model
        return load_model
    raise AttributeError(f"module 'lengen' has no attribute {name!r}")
