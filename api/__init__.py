"""The nvidia.com/v1alpha1 API: typed models, converter, CRD generation and validation rules."""
