-- Project, resource type and parameter code are strongly correlated in every index table; without
-- telling the planner, it multiplies their selectivities, expects one row where there are
-- hundreds, and picks nested loops that cost milliseconds. For strings and tokens the common
-- values are kept per parameter too (gender=male is half of all Patients, not one row).
CREATE STATISTICS IF NOT EXISTS search_string_keys (dependencies, ndistinct, mcv) ON project_id, resource_type, code, value FROM search_string;
CREATE STATISTICS IF NOT EXISTS search_token_keys (dependencies, ndistinct, mcv) ON project_id, resource_type, code, value FROM search_token;
CREATE STATISTICS IF NOT EXISTS search_reference_keys (dependencies, ndistinct) ON project_id, resource_type, code FROM search_reference;
CREATE STATISTICS IF NOT EXISTS search_date_keys (dependencies, ndistinct) ON project_id, resource_type, code FROM search_date;
CREATE STATISTICS IF NOT EXISTS search_number_keys (dependencies, ndistinct) ON project_id, resource_type, code FROM search_number;
CREATE STATISTICS IF NOT EXISTS search_quantity_keys (dependencies, ndistinct) ON project_id, resource_type, code FROM search_quantity;
CREATE STATISTICS IF NOT EXISTS search_uri_keys (dependencies, ndistinct) ON project_id, resource_type, code FROM search_uri;
CREATE STATISTICS IF NOT EXISTS resource_keys (dependencies, ndistinct) ON project_id, resource_type FROM resource;
