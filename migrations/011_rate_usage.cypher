// Rate budgets shared by the servers of one store (issue 22): each server writes what each caller
// used in the current clock minute, and reads what the others wrote, by window.
CREATE INDEX rate_usage_window IF NOT EXISTS FOR (r:RateUsage) ON (r.window);
