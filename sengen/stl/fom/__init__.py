"""HLA FOM imports (spec fom.md): FOM modules and mapping files read into the STL model."""
