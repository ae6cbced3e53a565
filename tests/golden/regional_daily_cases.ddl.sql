CREATE TABLE IF NOT EXISTS delta.`lakehouse/regional_daily_cases` (
  `region_code` string NOT NULL COMMENT 'ISO 3166-2 code of the region.',
  `report_date` date NOT NULL COMMENT 'The day the cases were reported for.',
  `reporting_org` string NOT NULL COMMENT 'Organisation that submitted the figure.',
  `case_count` bigint NOT NULL COMMENT 'Number of cases reported that day.',
  `status` string NOT NULL COMMENT 'provisional until the region confirms, then final.'
) USING DELTA
TBLPROPERTIES ('contract_gate.contract' = 'regional_daily_cases', 'contract_gate.role' = 'target');

ALTER TABLE delta.`lakehouse/regional_daily_cases` ADD CONSTRAINT `cg_region_code_max_length` CHECK ((`region_code` IS NULL OR char_length(`region_code`) <= 10));

ALTER TABLE delta.`lakehouse/regional_daily_cases` ADD CONSTRAINT `cg_region_code_not_blank` CHECK ((`region_code` IS NULL OR NOT `region_code` RLIKE '^[\\s\\p{Z}\\x{85}\\x{200B}\\x{FEFF}]*$'));

ALTER TABLE delta.`lakehouse/regional_daily_cases` ADD CONSTRAINT `cg_report_date_minimum` CHECK ((`report_date` IS NULL OR `report_date` >= DATE '2020-01-01'));

ALTER TABLE delta.`lakehouse/regional_daily_cases` ADD CONSTRAINT `cg_case_count_minimum` CHECK ((`case_count` IS NULL OR `case_count` >= 0));

ALTER TABLE delta.`lakehouse/regional_daily_cases` ADD CONSTRAINT `cg_status_enum` CHECK ((`status` IS NULL OR `status` IN ('provisional', 'final')));
