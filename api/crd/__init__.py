"""CustomResourceDefinitions generated from the models (pure: returns JSON, writes nothing)."""

from api.crd.definitions import CRDS, Column, CrdDefinition, build_crd, build_crds
from api.crd.schema import object_schema

__all__ = ["CRDS", "Column", "CrdDefinition", "build_crd", "build_crds", "object_schema"]
