CREATE TABLE IF NOT EXISTS delta.`lakehouse/meter_readings` (
  `meter_id` string NOT NULL,
  `channel` int NOT NULL,
  `reading_ts` timestamp NOT NULL,
  `kwh` decimal(12,3) NOT NULL,
  `voltage` double,
  `quality_flag` string
) USING DELTA
TBLPROPERTIES ('contract_gate.contract' = 'meter_readings', 'contract_gate.role' = 'target');

ALTER TABLE delta.`lakehouse/meter_readings` ADD CONSTRAINT `cg_meter_id_pattern` CHECK ((`meter_id` IS NULL OR `meter_id` RLIKE '^M[0-9]{6}\\z'));

ALTER TABLE delta.`lakehouse/meter_readings` ADD CONSTRAINT `cg_channel_minimum` CHECK ((`channel` IS NULL OR `channel` >= 1));

ALTER TABLE delta.`lakehouse/meter_readings` ADD CONSTRAINT `cg_channel_maximum` CHECK ((`channel` IS NULL OR `channel` <= 4));

ALTER TABLE delta.`lakehouse/meter_readings` ADD CONSTRAINT `cg_reading_ts_minimum` CHECK ((`reading_ts` IS NULL OR `reading_ts` >= TIMESTAMP '2020-01-01T00:00:00'));

ALTER TABLE delta.`lakehouse/meter_readings` ADD CONSTRAINT `cg_kwh_minimum` CHECK ((`kwh` IS NULL OR `kwh` >= 0));

ALTER TABLE delta.`lakehouse/meter_readings` ADD CONSTRAINT `cg_kwh_exclusive_maximum` CHECK ((`kwh` IS NULL OR `kwh` < 100000));
