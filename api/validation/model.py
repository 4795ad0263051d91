"""Rules for DynamoModel."""

from __future__ import annotations

from api.errors import FieldError
from api.v1alpha1 import MODEL_SOURCE_SCHEMES, MODEL_TYPES, DynamoModel
from api.validation import values

LORA = "lora"
DEFAULT_MODEL_TYPE = "base"


def validate_model(model: DynamoModel) -> list[FieldError]:
    """Every error in a model, as for a create."""
    spec = model.spec
    errors = values.required("spec.modelName", spec.model_name)
    errors += values.required("spec.baseModelName", spec.base_model_name)
    errors += values.one_of("spec.modelType", spec.model_type, MODEL_TYPES)
    if spec.source is None:
        if spec.model_type == LORA:
            errors.append(FieldError("spec.source", "required when modelType is lora"))
        return errors
    uri = spec.source.uri
    if not uri:
        errors.append(FieldError("spec.source.uri", "required"))
    elif not uri.startswith(MODEL_SOURCE_SCHEMES) or not uri.partition("://")[2].strip("/"):
        errors.append(
            FieldError(
                "spec.source.uri",
                f"must be s3://<bucket>/<path> or hf://<org>/<model>[@<revision>], got {uri!r}",
            )
        )
    return errors


def validate_model_update(old: DynamoModel, new: DynamoModel) -> list[FieldError]:
    """Errors of an update: those of `new`, plus changes that would break endpoint discovery."""
    errors = validate_model(new)
    if (old.spec.model_type or DEFAULT_MODEL_TYPE) != (new.spec.model_type or DEFAULT_MODEL_TYPE):
        errors.append(FieldError("spec.modelType", "is immutable"))
    if old.spec.base_model_name != new.spec.base_model_name:
        errors.append(FieldError("spec.baseModelName", "is immutable"))
    return errors
