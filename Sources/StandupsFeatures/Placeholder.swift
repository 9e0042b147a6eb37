import DependenciesMacros; import Dependencies
