#!/bin/sh
# Initializes /var/lib/mysql on first start (database MARIADB_DATABASE, user MARIADB_USER with
# MARIADB_PASSWORD from any host), then runs mariadbd in the foreground as PID 1's child.
set -eu
datadir=/var/lib/mysql
mkdir -p "$datadir" /run/mysqld
chown mysql:mysql "$datadir" /run/mysqld
if [ ! -d "$datadir/mysql" ]; then
  mariadb-install-db --user=mysql --datadir="$datadir" --skip-test-db --auth-root-authentication-method=socket >/dev/null
  mariadbd --user=mysql --datadir="$datadir" --bootstrap --skip-networking <<SQL
FLUSH PRIVILEGES;
CREATE DATABASE IF NOT EXISTS \`$MARIADB_DATABASE\`;
CREATE USER '$MARIADB_USER'@'%' IDENTIFIED BY '$MARIADB_PASSWORD';
GRANT ALL PRIVILEGES ON \`$MARIADB_DATABASE\`.* TO '$MARIADB_USER'@'%';
SQL
fi
exec mariadbd --user=mysql --datadir="$datadir" --bind-address=0.0.0.0 --port=3306 \
  --skip-name-resolve --innodb-buffer-pool-size=128M --max-connections=500
