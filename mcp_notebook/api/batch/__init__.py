"""A tool called over data (`conn.map`): rows of arguments (`rows`), the calls in flight on the
runtime's loop under a bound (`run`), their outcomes in row order (`result`), one progress
display while the caller waits (`progress`), and the two faces the connection takes (`methods`)."""
