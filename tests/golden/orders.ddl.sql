CREATE TABLE IF NOT EXISTS delta.`lakehouse/orders` (
  `order_id` string NOT NULL COMMENT 'Order number.',
  `customer_id` string NOT NULL COMMENT 'Customer who placed the order.',
  `order_total` double NOT NULL COMMENT 'Order total in the order currency.',
  `currency` string NOT NULL COMMENT 'ISO 4217 currency code.',
  `order_timestamp` timestamp NOT NULL COMMENT 'When the order was placed (UTC).'
) USING DELTA
TBLPROPERTIES ('contract_gate.contract' = 'orders', 'contract_gate.role' = 'target');

ALTER TABLE delta.`lakehouse/orders` ADD CONSTRAINT `cg_order_total_not_negative` CHECK ((`order_total` IS NULL OR `order_total` >= 0));

ALTER TABLE delta.`lakehouse/orders` ADD CONSTRAINT `cg_currency_allowed` CHECK ((`currency` IS NULL OR `currency` IN ('USD', 'EUR', 'GBP')));
