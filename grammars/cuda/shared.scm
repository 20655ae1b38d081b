; __shared__ declarations, static and `extern __shared__` (dynamic).
(declaration (type_qualifier "__shared__")) @shared
